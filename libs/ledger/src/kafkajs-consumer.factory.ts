import type { Kafka } from 'kafkajs';
import { KafkajsLedgerConsumer } from './kafkajs-ledger.consumer';
import type { ConsumerOptions, LedgerConsumer, LedgerConsumerFactory } from './ledger-consumer.port';

export class KafkajsConsumerFactory implements LedgerConsumerFactory {
  private readonly created = new Set<LedgerConsumer>();

  constructor(private readonly kafka: Kafka) {}

  create(options: ConsumerOptions): LedgerConsumer {
    const consumer = new KafkajsLedgerConsumer(this.kafka, options);
    this.created.add(consumer);
    return consumer;
  }

  /** Leaves every group this factory joined, so partitions move to other members at once. */
  async disconnectAll(): Promise<void> {
    const consumers = [...this.created];
    this.created.clear();
    await Promise.allSettled(consumers.map((c) => c.disconnect()));
  }
}
