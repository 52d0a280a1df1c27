/**
 * @tally/events: the event contracts and the outbox contract.
 * - Each event's `data`, the CloudEvents envelope and the `tally.dlq.v1` headers, defined once as
 *   TypeBox schemas: the TypeScript types, the consumers' compiled validators (`parse*Event`) and
 *   the published JSON Schema documents (docs/contracts/, `eventContractDocuments`) all come from them.
 * - The outbox contract between the writers (engine: decide.lua, release.lua) and the reader (the
 *   relay): the decision payload encoder and decoder, the lease release payload, its prefixes, the
 *   stream, denial-hash and lease layouts below a shard's base key, the denial field codec; and the
 *   builders that turn entries into events (`tally.lease.v1` of a release entry, `tally.override.v1`
 *   of an override change and the stored override value it carries, included).
 *
 * Does NOT own:
 * - topic names, partitions, retention, the AsyncAPI document: `@tally/ledger`;
 * - the shard base key (`tally:v1:{s<N>}`), window, idempotency and lease record keys: `@tally/engine` keys.ts;
 * - producing, consuming, relaying, folding: `@tally/ledger`, `@tally/outbox`, `@tally/projections`.
 */
export { DENY_REASONS, isDenyReason, type DenyReason } from './deny-reasons';
export {
  CLOUDEVENTS_CONTENT_TYPE,
  CLOUDEVENTS_SPECVERSION,
  DECISION_EVENT_TYPE,
  DECISION_V2_EVENT_TYPE,
  DECISION_OUTCOMES,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  LEASE_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  USAGE_EVENT_TYPE,
  type DecisionOutcome,
} from './event-types';
// The outbox contract (writer: the engine and decide.lua; reader: the relay): payload, keys, denials.
export {
  decodeOutboxEntry,
  OutboxEntryError,
  type DecodedOutboxEntry,
  type OutboxEntry,
  type OutboxPayload,
  type OutboxPolicy,
  type OutboxWindow,
  type OutboxWindowResult,
} from './outbox/outbox-payload';
export { payloadJson, type PayloadParts, type PayloadPolicy } from './outbox/payload-json';
export {
  decodeLeaseEntry,
  leasePayloadJson,
  type LeaseEntry,
  type LeasePayload,
  type LeaseWindow,
} from './outbox/lease-payload';
export {
  decodeOverrideEntry,
  decodeStoredOverride,
  overrideHeadJson,
  type OverrideEntry,
  type OverrideHead,
  type StoredOverride,
} from './outbox/override-payload';
export {
  DEGRADED_RESULTS,
  degradedPayload,
  deniedPayloadPrefix,
  PAYLOAD_PREFIX,
} from './outbox/payload-prefix';
export {
  DENIAL_RESULTS_SUFFIX,
  DENIAL_SAMPLE_SUFFIX,
  denialField,
  denialHashKey,
  denialLeaseKey,
  denialTag,
  outboxStreamKey,
  parseDenialField,
  type DenialFieldParts,
} from './outbox/outbox-keys';
export { cloudEventV1 } from './cloud-event.v1';
export { PolicyOutcomeV1, ULID_PATTERN, WindowStateV1 } from './event-parts.v1';
export { UsageDataV1, UsageEventV1 } from './usage-event.v1';
export { DecisionDataV1, DecisionEventV1 } from './decision-event.v1';
export { DecisionDataV2, DecisionEventV2 } from './decision-event.v2';
export { LeaseDataV1, LeaseEventV1, LeaseWindowV1 } from './lease-event.v1';
export { leaseEventFromOutbox, parseLeaseEvent } from './lease-event';
export { OverrideDataV1, OverrideEventV1, OverrideStateV1 } from './override-event.v1';
export { overrideEventFromOutbox } from './override-event';
export {
  decisionEventFromOutbox,
  kafkaKeyOf,
  ledgerEventFromOutbox,
  usageEventFromOutbox,
} from './event-builders';
export { usageRecordFromOutbox, type UsageRecord } from './usage-record';
export { coalescedDenialId, denialEvent, type CoalescedDenial } from './denial-event';
export {
  parseDecisionEvent,
  parseDecisionV2Event,
  parseLedgerEvent,
  parseOverrideEvent,
  parseUsageEvent,
  type LedgerEvent,
  type ParseResult,
} from './event-parsers';
export { DEAD_LETTER_SOURCES, DeadLetterHeadersV1, type DeadLetterSource } from './dead-letter.v1';
export { eventContractDocuments, JSON_SCHEMA_DIALECT, type ContractDocument } from './event-contracts';
