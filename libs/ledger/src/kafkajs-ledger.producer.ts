import { AsyncLocalStorage } from 'node:async_hooks';
import { CompressionTypes, Kafka, Message, Partitioners, Producer, type ICustomPartitioner } from 'kafkajs';
import type { LedgerMessage, LedgerProducer, SendOptions, TopicMessages } from './ledger-producer.port';
import { murmur2 } from './murmur2';
import { PartitionReceipts } from './partition-receipts';

const ACKS_ALL = -1;

export class KafkajsLedgerProducer implements LedgerProducer {
  /** The receipts of the sendBatch whose async context the partitioner runs in. */
  private readonly receipts = new AsyncLocalStorage<PartitionReceipts>();
  private readonly producer: Producer;
  private connected?: Promise<void>;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      // Idempotence lets the broker drop the duplicates that retries create; one request in
      // flight keeps per-partition order even when a request is retried. kafkajs 2.2.4 enforces that
      // for an idempotent producer whatever this says: its EOS manager holds a per-broker lock from
      // assigning a request's sequence numbers until the broker answers (sendMessages.js), so
      // concurrent sendBatch calls queue, and one that fails rolls its sequences back for the next
      // caller, reordering the two. The relay therefore never has two sendBatch calls in flight.
      idempotent: true,
      maxInFlightRequests: 1,
      // Topics are provisioned explicitly: a misspelt topic must fail, not appear.
      allowAutoTopicCreation: false,
      // Java-compatible murmur2 partitioning: other clients put a key in the same partition.
      // Each choice is also noted in the receipts of the sendBatch it serves (see sendBatch).
      createPartitioner: recordingPartitioner(this.receipts),
    });
  }

  connect(): Promise<void> {
    this.connected ??= this.producer.connect().catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  async send(topic: string, messages: readonly LedgerMessage[]): Promise<void> {
    await this.sendBatch([{ topic, messages }]);
  }

  async sendBatch(topicMessages: readonly TopicMessages[], options: SendOptions = {}): Promise<void> {
    const nonEmpty = topicMessages.filter((t) => t.messages.length > 0);
    if (nonEmpty.length === 0) return;
    await this.connect();
    const receipts = new PartitionReceipts();
    const acknowledged = await this.receipts.run(receipts, () =>
      this.producer.sendBatch({
        acks: ACKS_ALL,
        compression: options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
        topicMessages: nonEmpty.map((t) => ({ topic: t.topic, messages: t.messages.map(toKafkajs) })),
      }),
    );
    // A leader that moved during kafkajs's own retries can leave partitions unwritten while the
    // call resolves (partition-receipts.ts). Refused, the caller sends the whole batch again: the
    // partitions that were written then hold identical duplicates, which consumers drop by event id.
    const missing = receipts.missing(acknowledged);
    if (missing.length > 0) {
      throw new Error(`Kafka acknowledged the batch without partitions ${missing.join(', ')}: not written`);
    }
  }

  async disconnect(): Promise<void> {
    this.connected = undefined;
    await this.producer.disconnect();
  }
}

function recordingPartitioner(receipts: AsyncLocalStorage<PartitionReceipts>): ICustomPartitioner {
  return () => {
    const partition = Partitioners.DefaultPartitioner();
    return (args) => {
      const { message, partitionMetadata } = args;
      // A keyed message (every ledger record) is hashed here, as kafkajs's default would (same
      // partition, see keyPartition); anything else is left to that default.
      const chosen =
        typeof message.key === 'string' &&
        (message.partition === undefined || message.partition === null) &&
        partitionMetadata.length > 0
          ? keyPartition(message.key, partitionMetadata.length)
          : partition(args);
      receipts.getStore()?.record(args.topic, chosen);
      return chosen;
    };
  };
}

/**
 * The partition of a keyed record: the Java client's and kafkajs's default, `murmur2(key)` made
 * positive, modulo the topic's partition count (available or not, so a key never moves while a
 * leader is away), with the hash in 32-bit arithmetic instead of kafkajs's `Long`s (murmur2.ts).
 */
export function keyPartition(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** kafkajs only reads a message's headers: the (often shared) object is handed over as it is. */
function toKafkajs(message: LedgerMessage): Message {
  return { key: message.key, value: message.value, headers: message.headers };
}
