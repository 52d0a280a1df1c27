import type { DegradedEntry } from './degraded-entry';

/**
 * A bounded buffer of degraded entries: one FIFO per shard, since a shard (one outbox stream, one
 * slot) is what an append succeeds or fails for. Pure, no I/O: the ledger takes a batch, appends it to
 * Redis, then settles it, removing only what Redis acknowledged; an entry whose shard failed stays at
 * the front of that shard's queue, and no other shard waits for it.
 *
 * Only one batch may be out at a time (the ledger flushes single-flight); pushes during a flush go to
 * the tails and are untouched by the settle.
 */
export class DegradedBuffer {
  private readonly queues = new Map<number, ShardQueue>();
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new Error('capacity must be an integer ≥ 1');
  }

  get size(): number {
    return this.count;
  }

  /**
   * Appends an entry; false when full, and the entry is not kept. The newest are the ones dropped: the
   * queued entries are already owed to the ledger, and keeping them keeps the heads stable batches.
   */
  push(entry: DegradedEntry): boolean {
    if (this.count >= this.capacity) return false;
    let queue = this.queues.get(entry.shard);
    if (queue === undefined) this.queues.set(entry.shard, (queue = new ShardQueue()));
    queue.push(entry);
    this.count++;
    return true;
  }

  /**
   * Up to `max` entries: the oldest of every shard not in `skip`, taken one shard after another in
   * turn, so one shard's backlog cannot fill a batch while the others wait. Each shard's part is the
   * head of its queue, oldest first (a copy: pushes do not change it).
   */
  head(max: number, skip: ReadonlySet<number> = new Set()): DegradedEntry[] {
    const queues = [...this.queues].filter(([shard]) => !skip.has(shard)).map(([, q]) => q);
    const batch: DegradedEntry[] = [];
    for (let depth = 0; batch.length < max && queues.length > 0; depth++) {
      for (let i = 0; i < queues.length && batch.length < max;) {
        const entry = queues[i].at(depth);
        if (entry === undefined) queues.splice(i, 1);
        else {
          batch.push(entry);
          i++;
        }
      }
    }
    return batch;
  }

  /**
   * Removes the entries of `batch` (taken with `head`) that are in `acked`; the others stay at the
   * front of their shard's queue in their order, to be retried first. Returns how many were removed.
   */
  settle(batch: readonly DegradedEntry[], acked: ReadonlySet<DegradedEntry>): number {
    const parts = new Map<number, DegradedEntry[]>();
    for (const entry of batch) {
      const part = parts.get(entry.shard);
      if (part) part.push(entry);
      else parts.set(entry.shard, [entry]);
    }
    for (const [shard, part] of parts) {
      const queue = this.queues.get(shard);
      if (queue === undefined || !queue.startsWith(part))
        throw new Error('settle: batch is not the head of the buffer');
    }
    let removed = 0;
    for (const [shard, part] of parts) {
      const queue = this.queues.get(shard) as ShardQueue;
      removed += queue.settle(part, acked);
      if (queue.size === 0) this.queues.delete(shard);
    }
    this.count -= removed;
    return removed;
  }
}

/** One shard's FIFO. Settling is O(part): the survivors move up against the rest of the queue. */
class ShardQueue {
  private items: (DegradedEntry | undefined)[] = [];
  private start = 0;

  get size(): number {
    return this.items.length - this.start;
  }

  push(entry: DegradedEntry): void {
    this.items.push(entry);
  }

  /** The entry `depth` places behind the head, if any. */
  at(depth: number): DegradedEntry | undefined {
    return this.items[this.start + depth];
  }

  startsWith(part: readonly DegradedEntry[]): boolean {
    return part.every((entry, i) => this.items[this.start + i] === entry);
  }

  settle(part: readonly DegradedEntry[], acked: ReadonlySet<DegradedEntry>): number {
    const survivors = part.filter((entry) => !acked.has(entry));
    const removed = part.length - survivors.length;
    for (let i = 0; i < removed; i++) this.items[this.start + i] = undefined;
    survivors.forEach((entry, i) => (this.items[this.start + removed + i] = entry));
    this.start += removed;
    this.compact();
    return removed;
  }

  /** Drops the slots before the head once they are the larger part, so memory follows the size. */
  private compact(): void {
    if (this.start === this.items.length) {
      this.items = [];
      this.start = 0;
    } else if (this.start > 1024 && this.start * 2 > this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }
}
