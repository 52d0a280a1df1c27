/**
 * @tally/engine: the decision (DESIGN §3), in five parts behind this one door, each with its own
 * `index.ts` saying what it owns and what it does not.
 *   plan/       a decision before and after Redis, pure: the plan, the answer, ids, the decision types
 *   store/      the Redis side: `EngineService` (deadlines, node breakers, durable mode, health) and
 *               the hot-path key layout (`keys.ts`), behind the ports the use cases name
 *   failure/    when Redis does not answer: breakers, fail modes, degraded ledger, local fallback
 *   leases/     concurrency leases: the lease plan, release and extend (`LeaseService`)
 *   overrides/  runtime overrides: validation, store, the service, this process's copy
 * At the top: `DecisionService` (the use case, deciding through the `DecisionStore` port),
 * `EngineModule` (the only wiring), the settings and tokens, the metrics port (`DecisionObserver`),
 * and the script and window maths shared by the parts (`decide.script.ts`, `lua/`, `window-math.ts`,
 * `policy-state*.ts`, `utc-month.ts`).
 *
 * Does NOT own:
 * - the policy file, its schema, matching and selectors (`@tally/policy`): it plans with them;
 * - the wire shapes of a decision (`@tally/api-contract`) and their HTTP / gRPC mapping
 *   (`@tally/http`, `@tally/envoy-rls`, apps/decision-api);
 * - the outbox payload, the stream and denial layouts below a shard's base key and the events built
 *   from them (`@tally/events`); relaying the outbox to Kafka (`@tally/outbox`);
 * - the Redis client and the Lua loader (`@tally/redis`); the settings' environment (`@tally/config`);
 * - metrics and health endpoints (the app implements `DecisionObserver`, `@tally/observability`).
 */
export { EngineModule, type EngineModuleOptions } from './engine.module';
export { DecisionService } from './decision.service';
export type { DecisionStore, PlanState, StepResult } from './decision-store';
export { DEFAULT_MAX_COST, type EngineOptions, type PolicySetSource } from './engine.options';
export {
  DECISION_OBSERVER,
  DECISION_STORE,
  DEGRADED_OUTBOX,
  ENGINE_OPTIONS,
  ENGINE_REDIS,
  LEASE_STORE,
  POLICY_SET_SOURCE,
} from './engine.constants';
export type { DecisionObserver } from './decision-observer';
export { decideArgs, decideLua } from './decide.script';
export { ALGORITHM_REGISTRY, evaluateWindow } from './algorithms/registry';
export type { AlgorithmEntry, ReseedFold, ReseedPlan, ReseedRule } from './algorithms/algorithm-entry';
export { reseedWriter, type ReseedWrite, type ReseedWritten } from './algorithms/reseed.script';
export { policyStateKeyPattern } from './algorithms/policy-state-pattern';
export type { WindowMathSpec, WindowResult, WindowState } from './window-math';
export { utcMonthOf } from './utc-month';
export type { PolicyStateResult, PolicyStateView, WindowStateView } from './policy-state';
export { POLICY_STATE_EXPIRY_FIELD, unpackWindowState } from './policy-state-hash';

// plan/
export {
  IDEMPOTENCY_KEY_RULE,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  isIdempotencyKey,
  planDecision,
  type BackendFailure,
  type Decision,
  type DecisionBinding,
  type DecisionCode,
  type DecisionPlan,
  type DecisionPolicy,
  type DecisionRequest,
  type DecisionWindow,
  type PlanContext,
  type PlanRefusal,
  type PlanResult,
  type PlannedWindow,
} from './plan';

// store/
export { EngineService, type EngineHealth, type EngineHealthStatus } from './store';
// store/keys.ts: the key layout is a contract, exported so tests and tools assert and read exact keys
export {
  KEY_PREFIX,
  NO_TENANT,
  allShardKeys,
  decodeScope,
  encodeScope,
  fnv1a32,
  idempotencyKey,
  leaseIdOf,
  leaseKey,
  overrideField,
  overrideIndexKey,
  overridesKey,
  parseLeaseId,
  parsePolicyStateKey,
  policyStateKey,
  shardKeys,
  shardOf,
  windowKey,
  type ShardKeys,
  type WindowKeyParts,
} from './store/keys';

// failure/
export {
  DEFAULT_DEGRADED_LEDGER,
  DEFAULT_LOCAL_FALLBACK,
  DegradedLedger,
  localFallbackOf,
  type BreakerOptions,
  type BreakerState,
  type DegradedEntry,
  type DegradedLedgerOptions,
  type DegradedOutbox,
  type LocalFallbackOutcome,
  type LocalLimiterOptions,
} from './failure';

// leases/
export { LeaseService, type LeaseExtension, type LeaseRelease, type LeaseStore } from './leases';

// overrides/
export {
  DEFAULT_LIST_LIMIT,
  EMPTY_KEY,
  MAX_LIST_LIMIT,
  OverrideCopy,
  OverridesCache,
  OverridesService,
  OverridesStore,
  checkChange,
  checkTarget,
  keyOnWire,
  parseRfc3339,
  type HeldOverride,
  type Override,
  type OverrideAddress,
  type OverrideCacheOptions,
  type OverrideCacheStats,
  type OverrideChange,
  type OverridePage,
  type OverrideResult,
  type OverrideTarget,
  type OverrideWritten,
  type SkippedOverrides,
} from './overrides';
