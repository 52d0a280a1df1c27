export {
  GRANULARITIES,
  addBuckets,
  bucketCount,
  bucketStart,
  isGranularity,
  nextBucketStart,
  type Granularity,
} from './granularity';
export {
  DEFAULT_RANGE_BUCKETS,
  MAX_RANGE_BUCKETS,
  parseInstant,
  parseUsageRange,
  type BucketRange,
  type Parsed,
  type QueryError,
} from './time-range';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, bucketPage, parsePageSize, type BucketPage } from './bucket-pages';
export { decodeCursor, encodeCursor } from './cursor';
export { coverRange, type CoverBucket } from './range-cover';
export { ZERO_TOTALS, isZeroTotals, mergeTotals, type Totals } from './totals';
export {
  DEFAULT_AUDIT_LIMIT,
  MAX_AUDIT_LIMIT,
  nextAuditCursor,
  parseAuditQuery,
  type AuditPosition,
  type AuditQuery,
} from './audit-query';
export {
  AUDIT_TYPES,
  auditEntryFromMember,
  auditMember,
  type AuditEntry,
  type AuditType,
} from './audit-entry';
export {
  ACTIVE_NAMESPACE_KEY,
  NAMESPACES_KEY,
  NO_TENANT_PART,
  ProjectionKeys,
  bucketToken,
  decodeKeyPart,
  dedupTokenOf,
  encodeKeyPart,
  isValidNamespace,
  offsetField,
  parseBucketToken,
  parseOffsetField,
  parseUsageField,
  parseUsageKey,
  usageField,
  type UsageKeyParts,
  type UsageMetric,
} from './projection-keys';
export { readKeyUsageHash, readUsageHash } from './usage-hash';
export { ALL_POLICIES, UNMATCHED_POLICY, foldEvents } from './fold-events';
export type {
  CellRoom,
  DedupMark,
  FoldContext,
  FoldLimits,
  ProjectionDelta,
  RefusedIndex,
  UsageIncrement,
  UsageTotalIncrement,
} from './projection-delta';
export {
  diffProjections,
  parseUsageCellId,
  usageCellId,
  type ProjectionDifference,
  type UsageCell,
} from './diff-projections';
export { batchStepArgs, type BatchStepArgs, type BatchStepOptions, type OffsetMark } from './batch-step';
export { sortBatch, deadLetterOf, type Rejected, type SortedBatch } from './batch-records';
export {
  ProjectionStore,
  type ApplyOutcome,
  type PreparedStep,
  type RefusalSink,
  type RefusedEvent,
  type StepEvents,
} from './projection.store';
export { StepWriter, type RefusedRecord, type StepHooks } from './step-writer';
export { MAX_AGGREGATE } from './exact-counter';
export { ProjectionQueries } from './projection.queries';
export type { AuditEntryView, AuditRequest, AuditView, QueryResult, UsageRequest } from './query-views';
export { formatInstant, type UsageBucketView, type UsageView } from './usage-page';
export { POLICY_KEY, POLICY_KEY_MESSAGE } from './policy-key-param';
export { MAX_TOP_KEYS_LIMIT, type TopKeysRequest, type TopKeysView } from './top-keys-query';
export type { KeyUsage } from './top-keys';
export { ProjectionCorruptError, type CorruptUsage } from './projection-corrupt.error';
export { ProjectionsModule, type ProjectionsModuleOptions } from './projections.module';
export type { ProjectorOptions, ProjectorTopics } from './projector.options';
export { Projector } from './projector.service';
export { PROJECTION_CLOCK } from './projections.constants';
