export { DENY_REASONS, isDenyReason, type DenyReason } from './deny-reasons';
export {
  CLOUDEVENTS_CONTENT_TYPE,
  CLOUDEVENTS_SPECVERSION,
  DECISION_EVENT_TYPE,
  DECISION_OUTCOMES,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  USAGE_EVENT_TYPE,
  type DecisionOutcome,
} from './event-types';
export {
  OutboxEntryError,
  type OutboxEntry,
  type OutboxPayload,
  type OutboxPolicy,
  type OutboxWindow,
  type OutboxWindowResult,
} from './outbox-payload';
export { cloudEventV1 } from './cloud-event.v1';
export { PolicyOutcomeV1, ULID_PATTERN, WindowStateV1 } from './event-parts.v1';
export { UsageDataV1, UsageEventV1 } from './usage-event.v1';
export { DecisionDataV1, DecisionEventV1 } from './decision-event.v1';
export { decisionEventFromOutbox, kafkaKeyOf, usageEventFromOutbox } from './event-builders';
export { coalescedDenialId, denialEvent, type CoalescedDenial } from './denial-event';
export {
  parseDecisionEvent,
  parseLedgerEvent,
  parseUsageEvent,
  type LedgerEvent,
  type ParseResult,
} from './event-parsers';
export { DEAD_LETTER_SOURCES, DeadLetterHeadersV1, type DeadLetterSource } from './dead-letter.v1';
export { eventContractDocuments, JSON_SCHEMA_DIALECT, type ContractDocument } from './event-contracts';
