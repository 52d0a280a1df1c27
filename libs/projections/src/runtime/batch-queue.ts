/**
 * The hand-over between the Kafka consumer and the projector's writer: kafkajs fetches the next
 * response only once every batch of the current one has been handed over, so a handler that folds
 * and writes before returning leaves Redis idle during every fetch, and the fetch idle during every
 * fold. Batches wait here instead, in arrival order (per partition, kafkajs's order), while one
 * loop drains them.
 *
 * Bounded by records, not batches: `push` waits while the queue holds `maxRecords` or more, which
 * holds kafkajs (and its fetches) back. An empty queue always takes a batch, however large.
 */
export class BatchQueue<T> {
  private readonly items: { readonly item: T; readonly records: number }[] = [];
  private queued = 0;
  private closed = false;
  private readonly spaceWaiters: (() => void)[] = [];
  private itemWaiter?: () => void;

  constructor(private readonly maxRecords: number) {}

  /** Records waiting. */
  get records(): number {
    return this.queued;
  }

  get length(): number {
    return this.items.length;
  }

  /** Resolves once `item` is queued; refused (an error) after `close`. */
  async push(item: T, records: number): Promise<void> {
    while (!this.closed && this.items.length > 0 && this.queued >= this.maxRecords) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.closed) throw new Error('batch queue closed');
    this.items.push({ item, records });
    this.queued += records;
    this.wakeTaker();
  }

  /** The oldest item, waiting for one; undefined once closed and empty. */
  async take(): Promise<T | undefined> {
    while (this.items.length === 0) {
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.itemWaiter = resolve));
    }
    const head = this.items.shift();
    if (head === undefined) return undefined;
    this.queued -= head.records;
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return head.item;
  }

  /** Drops every waiting item (they were fetched before a seek); returns how many. */
  clear(): number {
    const dropped = this.items.length;
    this.items.length = 0;
    this.queued = 0;
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return dropped;
  }

  /** No more pushes; `take` returns what is queued, then undefined. */
  close(): void {
    this.closed = true;
    for (const wake of this.spaceWaiters.splice(0)) wake();
    this.wakeTaker();
  }

  private wakeTaker(): void {
    const wake = this.itemWaiter;
    this.itemWaiter = undefined;
    wake?.();
  }
}
