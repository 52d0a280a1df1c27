export { EngineModule } from './engine.module';
export type { EngineModuleOptions } from './engine.module';
export { DecisionService } from './decision.service';
export { EngineService } from './store/engine.service';
export { LeaseService, type LeaseRelease } from './leases/lease.service';
export type { LeaseExtension } from './leases/lease-extension';
export { DegradedLedger } from './failure/degraded-ledger';
export type { DegradedOutbox } from './failure/degraded-ledger';
export { DEFAULT_DEGRADED_LEDGER } from './failure/degraded-ledger.options';
export type { DegradedLedgerOptions } from './failure/degraded-ledger.options';
export type { DegradedEntry } from './failure/degraded-entry';
export type { EngineHealth, EngineHealthStatus } from './store/engine.service';
export { DEFAULT_MAX_COST } from './engine.options';
export type { EngineOptions, PolicySetSource } from './engine.options';
export { ENGINE_OPTIONS, ENGINE_REDIS, POLICY_SET_SOURCE, DECISION_OBSERVER } from './engine.constants';
export type { DecisionObserver } from './decision-observer';
export { DEFAULT_LOCAL_FALLBACK } from './failure/local-fallback';
export type { LocalFallbackOutcome } from './failure/local-fallback';
export type { LocalLimiterOptions } from './failure/local-limiter';
export type { BreakerState, BreakerOptions } from './failure/circuit-breaker';
export type {
  BackendFailure,
  Decision,
  DecisionBinding,
  DecisionCode,
  DecisionPolicy,
  DecisionRequest,
  DecisionWindow,
} from './plan/decision.types';
export type { PolicyStateResult, PolicyStateView, WindowStateView } from './policy-state';
export { planDecision } from './plan/decision-plan';
export { IDEMPOTENCY_KEY_RULE, MAX_IDEMPOTENCY_KEY_LENGTH, isIdempotencyKey } from './plan/idempotency-key';
export type { DecisionPlan, PlanContext, PlanRefusal, PlanResult, PlannedWindow } from './plan/decision-plan';
export { decideArgs } from './decide.script';
export { evaluateWindow } from './window-math';
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
} from './store/keys';
export type { ShardKeys, WindowKeyParts } from './store/keys';
export { POLICY_STATE_EXPIRY_FIELD, unpackWindowState } from './policy-state-hash';
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
export { overrideField, overrideIndexKey, overridesKey } from './store/keys';
