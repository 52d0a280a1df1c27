import { Kafka, Message, Partitioners, Producer } from 'kafkajs';
import type { LedgerMessage, LedgerProducer, TopicMessages } from './ledger-producer.port';

const ACKS_ALL = -1;

export class KafkajsLedgerProducer implements LedgerProducer {
  private readonly producer: Producer;
  private connected?: Promise<void>;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      // Idempotence lets the broker drop the duplicates that retries create; one request in
      // flight keeps per-partition order even when a request is retried.
      idempotent: true,
      maxInFlightRequests: 1,
      // Topics are provisioned explicitly: a misspelt topic must fail, not appear.
      allowAutoTopicCreation: false,
      // Java-compatible murmur2 partitioning: other clients put a key in the same partition.
      createPartitioner: Partitioners.DefaultPartitioner,
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

  async sendBatch(topicMessages: readonly TopicMessages[]): Promise<void> {
    const nonEmpty = topicMessages.filter((t) => t.messages.length > 0);
    if (nonEmpty.length === 0) return;
    await this.connect();
    await this.producer.sendBatch({
      acks: ACKS_ALL,
      topicMessages: nonEmpty.map((t) => ({ topic: t.topic, messages: t.messages.map(toKafkajs) })),
    });
  }

  async disconnect(): Promise<void> {
    this.connected = undefined;
    await this.producer.disconnect();
  }
}

function toKafkajs(message: LedgerMessage): Message {
  return {
    key: message.key,
    value: message.value,
    headers: message.headers ? { ...message.headers } : undefined,
  };
}
