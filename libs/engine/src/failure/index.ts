/**
 * failure/: what happens when Redis does not answer. The failure classification and deadlines
 * (`backend-failure.ts`), the circuit breaker and one per node (`node-breakers.ts`), the degraded
 * ledger (decisions allowed while Redis failed, buffered and appended to the outbox once it answers:
 * buffer, entry, degraded-append script), and the local fallback (`local_fallback` policies decided by
 * this process's bounded counters, `EngineLocalLimiter`, with the override copy's blocks).
 *
 * Does NOT own:
 * - talking to Redis: the degraded ledger flushes through the `DegradedOutbox` port (store/);
 * - which fail mode a decision has (the policy, read from plan/) or the answer's shape (plan/);
 * - the override copy it consults (overrides/ `OverridesCache`), nor the window maths (`window-math.ts`)
 *   or the limiter's rules (@tally/window-math `LocalLimiter`);
 * - the metrics it reports (`DecisionObserver`, implemented by the app).
 */
export { DegradedLedger } from './degraded-ledger';
export type { DegradedOutbox } from './degraded-outbox';
export { DEFAULT_DEGRADED_LEDGER, type DegradedLedgerOptions } from './degraded-ledger.options';
export type { DegradedEntry } from './degraded-entry';
export { DEFAULT_LOCAL_FALLBACK, localFallbackOf, type LocalFallbackOutcome } from './local-fallback';
export type { LocalLimiterOptions } from './local-limiter';
export type { BreakerOptions, BreakerState } from './circuit-breaker';
