/**
 * store/: the Redis side of the hot path. `EngineService` runs the engine's scripts (decide, release,
 * extend, degraded append) under a deadline per step and a breaker per Redis node, follows Cluster
 * failovers, waits for replicas in durable mode, and reports health; it provides the ports the use
 * cases name (`DecisionStore`, `LeaseStore`, `DegradedOutbox`). `keys.ts` is the hot-path key layout,
 * a contract (unit tests pin the strings); `key-slot.ts` and `redis-nodes.ts` map keys to nodes.
 *
 * Does NOT own:
 * - any business rule: what a plan is (plan/), what a failed step answers (failure/), leases (leases/);
 * - the breaker, deadline and failure classification themselves (failure/), which it applies;
 * - the scripts' Lua and their argument encoding (`lua/`, `decide.script.ts`, leases/*.script.ts);
 * - the Redis client and the script loader (`@tally/redis`); the outbox stream's name below a
 *   shard's base key and its payload (`@tally/events`); the projections' keys (`@tally/projections`).
 *
 * Its key layout (`keys.ts`) is exported by the engine's index name by name, straight from the file:
 * one list of the contract's names, there.
 */
export { EngineService, type EngineHealth, type EngineHealthStatus } from './engine.service';
