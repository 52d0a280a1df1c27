/**
 * Which partitions a batch was meant for and which ones the brokers acknowledged, so that a batch
 * "sent" without some of its partitions is refused instead of being taken for written.
 *
 * Why: kafkajs 2.2.4 retries a failed produce inside one `sendBatch`, remembering which brokers
 * already answered; when a leader dies and its partitions move to a broker that had answered, the
 * retry skips that broker and `sendBatch` resolves without ever writing those partitions
 * (test/e2e/kafka-cluster.faults.test.ts lost 30 acknowledged decisions to it before this check).
 */
export class PartitionReceipts {
  private readonly wanted = new Map<string, Set<number>>();

  /** Called by the partitioner for every message of every attempt. */
  record(topic: string, partition: number): void {
    let partitions = this.wanted.get(topic);
    if (partitions === undefined) this.wanted.set(topic, (partitions = new Set()));
    partitions.add(partition);
  }

  /** `topic/partition` of every partition a message was meant for and no broker acknowledged. */
  missing(acknowledged: readonly { readonly topicName: string; readonly partition: number }[]): string[] {
    const acked = new Set(acknowledged.map((a) => `${a.topicName}/${a.partition}`));
    const missing: string[] = [];
    for (const [topic, partitions] of this.wanted) {
      for (const partition of partitions) {
        if (!acked.has(`${topic}/${partition}`)) missing.push(`${topic}/${partition}`);
      }
    }
    return missing.sort();
  }
}
