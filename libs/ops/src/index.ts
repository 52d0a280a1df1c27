/**
 * @tally/ops: the CLI's commands (policy and token checks, the envoyproxy/ratelimit import, replay,
 * reconcile, reseed, simulate, consumers, projections, recent dead letters), as functions `apps/cli` maps
 * to argv and output and the projector's console endpoints call.
 *
 * Does NOT own:
 * - projection keys, namespaces, the active pointer, stored offsets or replay metadata
 *   (`@tally/projections`: `ProjectionNamespaces`, `NamespaceReader`); it never builds a projection key.
 * - the projector's group name (`PROJECTOR_GROUP` of `@tally/projections`, re-exported here).
 * - the enforcement key layout and window maths (`@tally/engine`), the policy schema (`@tally/policy`).
 * - Kafka clients and topics (`@tally/ledger`); argv parsing and output formats (`apps/cli`).
 */
export { loadOpsConfig, type OpsConfig, type OpsOverrides } from './ops-config';
export { OpsError } from './ops.error';
export { redisNowMs } from './redis-client';
export { ProgressMeter, type ProgressListener, type ProgressSnapshot } from './progress';
export { checkPolicyFile, loadPolicySet, type CheckedPolicy, type PolicyCheckResult } from './policy-check';
export { checkTokensFile, tokenLine, tokenLineYaml, type TokenLine, type TokensCheckResult } from './tokens';
export {
  PROJECTOR_GROUP,
  PROJECTOR_TOPICS,
  consumersStatus,
  resetConsumers,
  type ConsumerMember,
  type ConsumerPartition,
  type ConsumersDeps,
  type ConsumersResetResult,
  type ConsumersStatus,
} from './consumers';
export {
  planTopicRange,
  rangeSize,
  readTopicRanges,
  type PartitionRange,
  type RangeEnd,
  type RangeHandler,
  type RangeStart,
} from './topic-range';
export {
  recordedDecision,
  byTimeThenId,
  type RecordedDecision,
  type RecordedPolicy,
} from './recorded-decision';
export {
  PolicySimulator,
  type PolicyImpact,
  type PolicyTally,
  type SimulationReport,
} from './policy-simulator';
export { recentDeadLetters, type DeadLetter } from './dead-letters';
export { simulate, type SimulateOptions, type SimulateResult } from './simulate.command';
export { loadProposedOverrides, type ProposedOverride } from './proposed-overrides';
export { ReseedAccumulator, sustainedWindows, type ReseedTarget, type SustainedWindow } from './reseed-plan';
export {
  reseed,
  type ReseedOptions,
  type ReseedResult,
  type ReseededKey,
  type ReseededWindow,
} from './reseed.command';
export {
  dropNamespace,
  listNamespaces,
  namespaceExists,
  switchNamespace,
  type NamespaceInfo,
} from './namespaces';
export {
  REPLAY_CONCURRENCY,
  planReplay,
  replay,
  replayRanges,
  type RangesOutcome,
  type ReplayOptions,
  type ReplayPlan,
  type ReplayResult,
} from './replay.command';
export {
  dealRanges,
  replayWithWorkers,
  type ReplayAssignment,
  type ReplayWorkerPort,
} from './replay-workers';
export { reconcileNamespaces, type ReconcileOptions, type ReconcileResult } from './reconcile.command';
export {
  reconcileEnforcement,
  type EnforcementReconcileOptions,
  type EnforcementReconcileResult,
} from './reconcile-enforcement.command';
export type { EnforcementDifference } from './enforcement-diff';
export type { SkippedWindow } from './enforcement-windows';
export {
  importEnvoyConfig,
  type EnvoyImportDraft,
  type EnvoyImportNote,
  type EnvoyImportResult,
} from './envoy-import';
