/**
 * leases/: concurrency leases. The lease a decision takes (`lease-plan.ts`, planned with the
 * decision), giving it back and keeping it longer (`LeaseService`, through the `LeaseStore` port),
 * extend.lua's TTL rules and answers (`lease-extension.ts`), and the release / extend scripts' calls
 * and replies. Their `.lua` files sit in the engine's `lua/` beside decide.lua, which takes leases.
 *
 * Does NOT own:
 * - taking a lease: decide.lua's lease section, run by the store for a plan (plan/, store/);
 * - the lease record's key and the lease id format (store/keys.ts), or the release event's payload
 *   (`@tally/events`);
 * - running the scripts against Redis (store/ `EngineService` provides `LeaseStore`);
 * - the HTTP routes and their auth (apps/decision-api).
 */
export { LeaseService, type LeaseRelease } from './lease.service';
export type { LeaseExtension } from './lease-extension';
export type { LeaseStore } from './lease-store';
