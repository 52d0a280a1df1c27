/**
 * @tally/ledger: Kafka behind ports. The producer, the consumer group factory, the admin and topic
 * provisioning ports and their kafkajs adapters (kafkajs is confined to `kafkajs-*.ts`; a librdkafka producer in `rdkafka-*.ts`
 * for the client comparison bench, loaded from outside the tree), the topic
 * names and specs, lag, the ledger's log sink, and the AsyncAPI document of the topics.
 *
 * Does NOT own:
 * - the events' shapes and validation (`@tally/events`): it carries records, and builds the AsyncAPI
 *   document from the events' schemas;
 * - what moves into Kafka and when it is acknowledged: the relay (`@tally/outbox`);
 * - what is folded out of it and where offsets are stored: the projector (`@tally/projections`);
 * - operator commands on groups and offsets (`@tally/ops`), the brokers' settings (`@tally/config`).
 */
export { LedgerModule } from './ledger.module';
export type { LedgerModuleOptions } from './ledger.module';
export {
  LEDGER,
  LEDGER_PRODUCER,
  LEDGER_CONSUMER_FACTORY,
  TOPIC_PROVISIONER,
  KAFKA_ADMIN,
} from './ledger.constants';
export { TOPICS, autoReplication, ledgerTopicSpecs } from './topics';
export type { ReplicationSetting, TopicName } from './topics';
export { createKafka } from './kafkajs-client.factory';
export type { KafkaClientOptions } from './kafkajs-client.factory';
export { createLedger } from './kafkajs-ledger.factory';
// A librdkafka producer for the client comparison bench only (docs/adr/, "librdkafka"); not wired.
export { RdkafkaLedgerProducer } from './rdkafka-ledger.producer';
export type { RdkafkaProducerOptions } from './rdkafka-ledger.producer';
export type { RdkafkaNative } from './rdkafka-native';
export type { Ledger } from './ledger.port';
export { computeLag, nextOffset } from './lag';
export { planTopics } from './topic-plan';
export type { ExistingTopic, TopicPlan } from './topic-plan';
export { jsonLineLogSink } from './ledger-log';
export type { LedgerLogEntry, LedgerLogLevel, LedgerLogSink } from './ledger-log';
export type { LedgerMessage, LedgerProducer, SendOptions, TopicMessages } from './ledger-producer.port';
export type {
  Assignment,
  BatchContext,
  BatchHandler,
  ConsumerOptions,
  LedgerBatch,
  LedgerConsumer,
  LedgerConsumerFactory,
  LedgerRecord,
} from './ledger-consumer.port';
export type { ProvisionResult, TopicMismatch, TopicProvisioner, TopicSpec } from './topic-provisioner.port';
export type {
  ClusterDescription,
  CommittedOffset,
  GroupDescription,
  GroupMember,
  KafkaAdminPort,
  PartitionLag,
  PartitionOffset,
  ResetTarget,
  TopicPartitionOffsets,
} from './kafka-admin.port';
export { asyncApiDocument } from './asyncapi';
