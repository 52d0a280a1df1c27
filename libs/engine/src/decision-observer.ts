import type { BreakerState } from './failure/circuit-breaker';
import type { BackendFailure, Decision } from './plan/decision.types';
import type { LocalFallbackOutcome } from './failure/local-fallback';
import type { OverrideCacheStats } from './overrides/override-copy';

/**
 * Hooks for metrics and logs, so observability can subscribe without the engine depending on
 * prom-client. Called synchronously on the hot path: keep implementations cheap and non-throwing.
 */
export interface DecisionObserver {
  /** Every decision the engine answered (refusals and degraded ones included), with its latency. */
  onDecision?(decision: Decision, latencyMs: number): void;
  /** A Redis step failed (it is also reflected in the decisions it affected). */
  onBackendError?(reason: BackendFailure): void;
  /**
   * The circuit breakers (one per Redis node serving slots) changed: `state` is the worst of them,
   * `openNodes` how many are open (with one node, 1 exactly when `state` is `open`).
   */
  onBreaker?(state: BreakerState, openNodes: number): void;
  /**
   * The number of degraded decisions waiting for Redis to reach the ledger changed (a gauge): called
   * when one is buffered and after each flush round trip.
   */
  onDegradedBuffered?(size: number): void;
  /** `n` degraded decisions were dropped, the buffer being full: they never reach the ledger. */
  onDegradedDropped?(n: number): void;
  /**
   * A decision was made by the local fallback limiter (`local_fallback` policies, Redis failing):
   * called once per such policy of it, with what it came to and the keys now held in memory.
   */
  onLocalFallback?(policy: string, outcome: LocalFallbackOutcome, keys: number): void;
  /** A refresh round of this process's override copy ended (read or not): its age, size, skipped. */
  onOverrideCache?(stats: OverrideCacheStats): void;
}
