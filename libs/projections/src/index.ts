export {
  GRANULARITIES,
  addBuckets,
  bucketCount,
  bucketStart,
  isGranularity,
  nextBucketStart,
  type Granularity,
} from './fold/granularity';
export {
  DEFAULT_RANGE_BUCKETS,
  MAX_RANGE_BUCKETS,
  parseInstant,
  parseUsageRange,
  type BucketRange,
  type Parsed,
  type QueryError,
} from './queries/time-range';
export {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  bucketPage,
  parsePageSize,
  type BucketPage,
} from './queries/bucket-pages';
export { decodeCursor, encodeCursor } from './queries/cursor';
export { coverRange, type CoverBucket } from './queries/range-cover';
export { ZERO_TOTALS, isZeroTotals, mergeTotals, type Totals } from './fold/totals';
export {
  DEFAULT_AUDIT_LIMIT,
  MAX_AUDIT_LIMIT,
  nextAuditCursor,
  parseAuditQuery,
  type AuditPosition,
  type AuditQuery,
} from './queries/audit-query';
export {
  AUDIT_TYPES,
  auditEntryFromMember,
  auditMember,
  type AuditEntry,
  type AuditType,
} from './fold/audit-entry';
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
} from './sink/projection-keys';
export { readKeyUsageHash, readUsageHash } from './sink/usage-hash';
export { ALL_POLICIES, UNMATCHED_POLICY, foldEvents } from './fold/fold-events';
export type {
  CellRoom,
  DedupMark,
  FoldContext,
  FoldLimits,
  ProjectionDelta,
  RefusedIndex,
  UsageIncrement,
  UsageTotalIncrement,
} from './fold/projection-delta';
export {
  diffProjections,
  parseUsageCellId,
  usageCellId,
  type ProjectionDifference,
  type UsageCell,
} from './diff/diff-projections';
export { batchStepArgs, type BatchStepArgs, type BatchStepOptions, type OffsetMark } from './sink/batch-step';
export { sortBatch, deadLetterOf, type Rejected, type SortedBatch } from './runtime/batch-records';
export {
  ProjectionStore,
  type ApplyOutcome,
  type PreparedStep,
  type RefusalSink,
  type RefusedEvent,
  type StepEvents,
} from './sink/projection.store';
export { StepWriter, type RefusedRecord, type StepHooks } from './runtime/step-writer';
export { MAX_AGGREGATE } from './fold/exact-counter';
export { ProjectionQueries } from './queries/projection.queries';
export type {
  AuditEntryView,
  AuditRequest,
  AuditView,
  QueryResult,
  UsageRequest,
} from './queries/query-views';
export { formatInstant, type UsageBucketView, type UsageView } from './queries/usage-page';
export { POLICY_KEY, POLICY_KEY_MESSAGE } from './queries/policy-key-param';
export { MAX_TOP_KEYS_LIMIT, type TopKeysRequest, type TopKeysView } from './queries/top-keys-query';
export type { KeyUsage } from './queries/top-keys';
export { ProjectionCorruptError, type CorruptUsage } from './queries/projection-corrupt.error';
export { createProjectionRedis } from './sink/projection-redis';
export type { ProjectionRedis } from './sink/apply-batch.script';
export { ProjectionsModule, type ProjectionsModuleOptions } from './projections.module';
export type { ProjectorOptions, ProjectorTopics } from './runtime/projector.options';
export { Projector } from './runtime/projector.service';
export { PROJECTION_CLOCK } from './projections.constants';
