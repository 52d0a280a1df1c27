export { EngineModule } from './engine.module';
export type { EngineModuleOptions } from './engine.module';
export { DecisionService } from './decision.service';
export { EngineService } from './engine.service';
export { LeaseService, type LeaseRelease } from './lease.service';
export type { LeaseExtension } from './lease-extension';
export { DegradedLedger } from './degraded-ledger';
export type { DegradedOutbox } from './degraded-ledger';
export { DEFAULT_DEGRADED_LEDGER } from './degraded-ledger.options';
export type { DegradedLedgerOptions } from './degraded-ledger.options';
export type { DegradedEntry } from './degraded-entry';
export type { EngineHealth, EngineHealthStatus } from './engine.service';
export { DEFAULT_MAX_COST } from './engine.options';
export type { EngineOptions, PolicySetSource } from './engine.options';
export { ENGINE_OPTIONS, ENGINE_REDIS, POLICY_SET_SOURCE, DECISION_OBSERVER } from './engine.constants';
export type { DecisionObserver } from './decision-observer';
export { DEFAULT_LOCAL_FALLBACK } from './local-fallback';
export type { LocalFallbackOutcome } from './local-fallback';
export type { LocalLimiterOptions } from './local-limiter';
export type { BreakerState, BreakerOptions } from './circuit-breaker';
export type {
  BackendFailure,
  Decision,
  DecisionBinding,
  DecisionCode,
  DecisionPolicy,
  DecisionRequest,
  DecisionWindow,
} from './decision.types';
export type { PolicyStateResult, PolicyStateView, WindowStateView } from './policy-state';
export { planDecision } from './decision-plan';
export { IDEMPOTENCY_KEY_RULE, MAX_IDEMPOTENCY_KEY_LENGTH, isIdempotencyKey } from './idempotency-key';
export type { DecisionPlan, PlanContext, PlanRefusal, PlanResult, PlannedWindow } from './decision-plan';
export { decideArgs, decideLua } from './decide.script';
export { ALGORITHM_REGISTRY, evaluateWindow } from './algorithms/registry';
export type { AlgorithmEntry, ReseedFold, ReseedPlan, ReseedRule } from './algorithms/algorithm-entry';
export { reseedWriter, type ReseedWrite, type ReseedWritten } from './algorithms/reseed.script';
export type { WindowMathSpec, WindowResult, WindowState } from './window-math';
export { utcMonthOf } from './utc-month';
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
  parseLeaseId,
  parsePolicyStateKey,
  policyStateKey,
  shardKeys,
  shardOf,
  windowKey,
} from './keys';
export type { ShardKeys, WindowKeyParts } from './keys';
export { POLICY_STATE_EXPIRY_FIELD, unpackWindowState } from './policy-state-hash';
export { policyStateKeyPattern } from './algorithms/policy-state-pattern';
export {
  OverridesService,
  keyOnWire,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
} from './overrides/overrides.service';
export type { OverrideAddress, OverrideResult } from './overrides/overrides.service';
export { OverridesStore, type OverrideWritten } from './overrides/overrides.store';
export { OverridesCache } from './overrides/overrides.cache';
export type { OverrideCacheOptions, OverrideCacheStats } from './overrides/overrides.cache';
export { OverrideCopy } from './overrides/override-copy';
export type { HeldOverride, SkippedOverrides } from './overrides/override-copy';
export type { Override, OverrideChange, OverrideTarget } from './overrides/override.types';
export type { OverridePage } from './overrides/override-list';
export { checkChange, checkTarget, parseRfc3339, EMPTY_KEY } from './overrides/override-validation';
export { overrideField, overrideIndexKey, overridesKey } from './keys';
