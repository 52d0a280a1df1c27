import type { DegradedEntry } from './degraded-entry';

/**
 * A bounded FIFO of degraded entries. Pure, no I/O: the ledger takes a batch from the head, appends
 * it to Redis, then settles it, removing only what Redis acknowledged. Settling is O(batch): the
 * survivors of a batch move up against the rest of the queue, keeping their order.
 *
 * Only one batch may be out at a time (the ledger flushes single-flight); pushes during a flush go to
 * the tail and are untouched by the settle.
 */
export class DegradedBuffer {
  private items: (DegradedEntry | undefined)[] = [];
  private start = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new Error('capacity must be an integer ≥ 1');
  }

  get size(): number {
    return this.items.length - this.start;
  }

  /**
   * Appends an entry; false when full, and the entry is not kept. The newest are the ones dropped: the
   * queued entries are already owed to the ledger, and keeping them keeps the head a stable batch.
   */
  push(entry: DegradedEntry): boolean {
    if (this.size >= this.capacity) return false;
    this.items.push(entry);
    return true;
  }

  /** The oldest `max` entries, oldest first (a copy: pushes do not change it). */
  head(max: number): DegradedEntry[] {
    return this.items.slice(this.start, this.start + Math.max(0, max)) as DegradedEntry[];
  }

  /**
   * Removes the entries of `batch` (taken with `head`) that are in `acked`; the others stay at the
   * front in their order, to be retried first. Returns how many were removed.
   */
  settle(batch: readonly DegradedEntry[], acked: ReadonlySet<DegradedEntry>): number {
    batch.forEach((entry, i) => {
      if (this.items[this.start + i] !== entry)
        throw new Error('settle: batch is not the head of the buffer');
    });
    const survivors = batch.filter((entry) => !acked.has(entry));
    const removed = batch.length - survivors.length;
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
