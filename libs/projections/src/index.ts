/**
 * @tally/projections: the ledger folded into Redis read models, in five parts behind this one door.
 *   fold/        pure folding of ledger events into usage, audit and dedup deltas (no I/O)
 *   sink/        the Redis side: the key layout, apply-batch.lua and the atomic step store
 *   runtime/     the projector: consumer-group member, batch handler, resume positions, step writer
 *   queries/     the query API's reads (usage, audit, top keys) and their parameter rules
 *   diff/        what reconcile compares (usage cells, per-key costs, audit) and the diff itself
 *   namespaces/  the one owner of namespaces, the active pointer, stored offsets and replay metadata
 *
 * Does NOT own:
 * - the event shapes and their validation (`@tally/events`): it folds what events define.
 * - Kafka clients, topics and the dead-letter producer (`@tally/ledger`): it is handed them.
 * - the HTTP surface of the query API (`apps/projector`): controllers and DTOs live there.
 * - operator commands and their output (`@tally/ops`, `apps/cli`): they call `ProjectionNamespaces`,
 *   `NamespaceReader` and `ProjectionStore`, and never build a projection key themselves.
 * - the enforcement counters it is compared with (`@tally/engine`'s keys).
 * - the Redis client and the Lua loader (`@tally/redis`): the projector opens a `worker` client.
 */
export { ProjectionsModule, type ProjectionsModuleOptions } from './projections.module';
export { PROJECTION_CLOCK, PROJECTOR_GROUP } from './projections.constants';
export {
  foldedTopics,
  topicEventTypes,
  type ProjectorOptions,
  type ProjectorTopics,
} from './runtime/projector.options';
export { Projector } from './runtime/projector.service';
export { ShardedStepWriter } from './runtime/sharded-step-writer';
export { sortBatch } from './runtime/batch-records';

// Namespaces: the owner both the projector and the CLI call.
export { ProjectionNamespaces } from './namespaces/projection-namespaces';
export { NamespaceRefusedError } from './namespaces/namespace-refused.error';
export type {
  NamespaceCoverage,
  NamespaceInfo,
  ReplayStart,
  StoredOffset,
} from './namespaces/namespace-info';

// The sink.
export { ProjectionStore, type RefusedEvent, type ShardRef } from './sink/projection.store';
export { shardOfPartition, shardsForPartitions } from './sink/projection-keys';

// Queries (the projector app's HTTP surface maps these).
export { ProjectionQueries } from './queries/projection.queries';
export type { AuditView, QueryResult } from './queries/query-views';
export type { UsageView } from './queries/usage-page';
export { MAX_TOP_KEYS_LIMIT, type TopKeysView } from './queries/top-keys-query';
export { POLICY_KEY, POLICY_KEY_MESSAGE } from './queries/policy-key-param';
export { ProjectionCorruptError } from './queries/projection-corrupt.error';

// Diffs (reconcile).
export { NamespaceReader, type KeyUsageBucket, type ProjectedKeyCost } from './diff/namespace.reader';
export { diffProjections, type ProjectionDifference } from './diff/diff-projections';

// Public types of the folded model.
export { GRANULARITIES, isGranularity, nextBucketStart, type Granularity } from './fold/granularity';
export type { AuditEntry } from './fold/audit-entry';
export type { Totals } from './fold/totals';

/**
 * The Redis key layout, a contract: exported so tests (and the bench) can assert exact keys and
 * values. Production code outside this lib calls the owners above instead.
 */
export { NamespaceKeys, ProjectionKeys, dedupTokenOf } from './sink/projection-keys';
export { readUsageHash } from './sink/usage-hash';
export { UNMATCHED_POLICY } from './fold/fold-events';
