/** DI tokens of the engine module. */
export const ENGINE_OPTIONS = Symbol('ENGINE_OPTIONS');
/** The ioredis client (single node or Cluster) of the hot path. */
export const ENGINE_REDIS = Symbol('ENGINE_REDIS');
/** A `PolicySetSource`: where the engine reads the policy set in force. */
export const POLICY_SET_SOURCE = Symbol('POLICY_SET_SOURCE');
/** An optional `DecisionObserver` (metrics). */
export const DECISION_OBSERVER = Symbol('DECISION_OBSERVER');
/** The `DecisionStore` port `DecisionService` decides through (the module binds the Redis store). */
export const DECISION_STORE = Symbol('DECISION_STORE');
/** The `LeaseStore` port of `LeaseService` (the module binds the Redis store). */
export const LEASE_STORE = Symbol('LEASE_STORE');
/** The `DegradedOutbox` port the degraded ledger flushes into (the module binds the Redis store). */
export const DEGRADED_OUTBOX = Symbol('DEGRADED_OUTBOX');
