/** {@link LedgerProducer}: idempotent, acks=all. */
export const LEDGER_PRODUCER = Symbol('LEDGER_PRODUCER');
/** {@link LedgerConsumerFactory}: batch consumers in a group. */
export const LEDGER_CONSUMER_FACTORY = Symbol('LEDGER_CONSUMER_FACTORY');
/** {@link TopicProvisioner}: idempotent topic creation. */
export const TOPIC_PROVISIONER = Symbol('TOPIC_PROVISIONER');
/** {@link KafkaAdminPort}: groups, offsets, lag, resets. */
export const KAFKA_ADMIN = Symbol('KAFKA_ADMIN');
/** The {@link Ledger} bundle the other tokens are taken from; closed on application shutdown. */
export const LEDGER = Symbol('LEDGER');
