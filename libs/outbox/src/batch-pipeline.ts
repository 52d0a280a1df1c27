/**
 * Orders the Kafka produce and the Redis acknowledgement of consecutive batches so that each waits
 * only for what it must:
 * - a batch's produce starts once the previous batch's produce is confirmed: one sendBatch in flight,
 *   in read order (the idempotent kafkajs producer keeps a partition's order only that way);
 * - its acknowledgement follows its own produce and the previous batch's acknowledgement, so entries
 *   are acknowledged in read order, never before Kafka has them, while the next batch is produced.
 * A step that resolves `false` (abandoned at shutdown) stops the acknowledgements after it: those
 * entries stay pending and another relay re-claims them.
 */
export class BatchPipeline {
  private produced?: Promise<boolean>;
  private acknowledged?: Promise<boolean>;

  /** Waits for the previous produce, then starts this batch; false when that produce was abandoned. */
  async submit(produce: () => Promise<boolean>, acknowledge: () => Promise<boolean>): Promise<boolean> {
    if (this.produced !== undefined && !(await this.produced)) return false;
    const produced = produce();
    const previous = this.acknowledged;
    const acknowledged = (async () => {
      if (!(await produced)) return false;
      if (previous !== undefined && !(await previous)) return false;
      return acknowledge();
    })();
    // Awaited by the next submit or settle; marked handled so a failure never crashes the process
    // before then (it still rejects for whoever awaits it).
    acknowledged.catch(() => undefined);
    this.produced = produced;
    this.acknowledged = acknowledged;
    return true;
  }

  /** Waits until everything submitted is produced and acknowledged; false if a step was abandoned. */
  async settle(): Promise<boolean> {
    const { produced, acknowledged } = this;
    this.produced = undefined;
    this.acknowledged = undefined;
    const producedOk = produced === undefined || (await produced);
    const acknowledgedOk = acknowledged === undefined || (await acknowledged);
    return producedOk && acknowledgedOk;
  }
}
