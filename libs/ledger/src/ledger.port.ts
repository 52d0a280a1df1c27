import type { KafkaAdminPort } from './kafka-admin.port';
import type { LedgerConsumerFactory } from './ledger-consumer.port';
import type { LedgerProducer } from './ledger-producer.port';
import type { TopicProvisioner } from './topic-provisioner.port';

/** Every ledger port over one client, for code that runs without Nest (CLI, tests). */
export interface Ledger {
  readonly producer: LedgerProducer;
  readonly consumers: LedgerConsumerFactory;
  readonly provisioner: TopicProvisioner;
  readonly admin: KafkaAdminPort;
  /** Consumers leave their groups first, then the producer and admin connections close. */
  close(): Promise<void>;
}
