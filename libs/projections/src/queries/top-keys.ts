/** One policy key's usage in one bucket: a field of a `keys:` hash, read. */
export interface KeyUsage {
  /** The policy key, as the field stores it (raw, not encoded). */
  readonly key: string;
  /** Units spent. */
  readonly cost: number;
  /** Decisions counted. */
  readonly count: number;
}

/**
 * Top-keys order, heaviest first: cost descending, then count descending, then key ascending (UTF-16
 * code unit order, JavaScript's string order). Keys are unique in a hash, so no two entries tie and
 * the answer never depends on the order Redis returned the fields in.
 */
export function compareKeyUsage(a: KeyUsage, b: KeyUsage): number {
  if (a.cost !== b.cost) return b.cost - a.cost;
  if (a.count !== b.count) return b.count - a.count;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * The best `limit` entries of a stream of any length, in memory bounded by `limit`: a heap whose root
 * is the worst entry kept, so most offers of a long tail cost one comparison. A key offered again
 * (HSCAN may return a field twice, e.g. while Redis rehashes the hash) replaces its earlier entry
 * instead of being kept twice: the later read is the newer one, as counters only grow. A key evicted
 * earlier and offered again competes like a new one, so it is still listed at most once.
 */
export class TopKeys {
  /** Worst first: every parent ranks after (or equal to) its children. */
  private readonly heap: KeyUsage[] = [];
  /** Key → its index in `heap`, for the entries kept. */
  private readonly index = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be ≥ 1, got ${limit}`);
  }

  offer(entry: KeyUsage): void {
    const kept = this.index.get(entry.key);
    if (kept !== undefined) {
      this.heap[kept] = entry;
      this.siftDown(this.siftUp(kept));
      return;
    }
    if (this.heap.length < this.limit) {
      this.heap.push(entry);
      this.index.set(entry.key, this.heap.length - 1);
      this.siftUp(this.heap.length - 1);
      return;
    }
    const worst = this.heap[0];
    if (worst === undefined || compareKeyUsage(entry, worst) >= 0) return;
    this.index.delete(worst.key);
    this.place(entry, 0);
    this.siftDown(0);
  }

  /** The entries kept, heaviest first. */
  ranked(): KeyUsage[] {
    return [...this.heap].sort(compareKeyUsage);
  }

  /** Moves the entry at `i` towards the root while it ranks after its parent; returns where it stops. */
  private siftUp(i: number): number {
    const entry = this.at(i);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = this.at(parent);
      if (compareKeyUsage(entry, above) <= 0) break;
      this.place(above, i);
      i = parent;
    }
    this.place(entry, i);
    return i;
  }

  private siftDown(i: number): void {
    const entry = this.at(i);
    for (;;) {
      let worst = i;
      let worstEntry = entry;
      for (const child of [2 * i + 1, 2 * i + 2]) {
        const below = this.heap[child];
        if (below !== undefined && compareKeyUsage(below, worstEntry) > 0) {
          worst = child;
          worstEntry = below;
        }
      }
      if (worst === i) break;
      this.place(worstEntry, i);
      i = worst;
    }
    this.place(entry, i);
  }

  private at(i: number): KeyUsage {
    const entry = this.heap[i];
    if (entry === undefined) throw new RangeError(`no heap entry at ${i}`);
    return entry;
  }

  private place(entry: KeyUsage, i: number): void {
    this.heap[i] = entry;
    this.index.set(entry.key, i);
  }
}
