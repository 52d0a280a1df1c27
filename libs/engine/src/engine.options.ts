import type { PolicySet } from '@tally/policy';
import type { BreakerOptions } from './failure/circuit-breaker';
import type { DegradedLedgerOptions } from './failure/degraded-ledger.options';
import type { RedisConnection } from '@tally/redis';
import type { ReplicaWait } from './store/replica-wait';
import type { LocalLimiterOptions } from './failure/local-limiter';
import type { OverrideCacheOptions } from './overrides/override-copy';

/**
 * The default global cost ceiling (`TALLY_MAX_COST`'s default): see `EngineOptions.maxCost`. Engines
 * built without the setting (tests, tools) get the production default, never "no ceiling".
 */
export const DEFAULT_MAX_COST = 1_000_000;

/** Settings of the engine, built from TallyConfig by the app. */
export interface EngineOptions {
  /** Where Redis is. */
  readonly redis: RedisConnection;
  /** TALLY_SHARDS: hash-tag shards of the keys (changing it moves every key). */
  readonly shards: number;
  /** TALLY_BACKEND_TIMEOUT_MS: deadline of one Redis step (one script, or one batch pipeline). */
  readonly backendTimeoutMs: number;
  /** TALLY_IDEMPOTENCY_TTL in ms: how long an allowed decision is replayable. */
  readonly idempotencyTtlMs: number;
  /** TALLY_TOKEN_SECRET: HMAC secret for `token` selectors. */
  readonly tokenSecret: string;
  /**
   * TALLY_MAX_COST: the largest cost of any decision, whether a policy applies or not (413 above it,
   * nothing consumed); policies' `max_cost` and limits can only lower it. Default `DEFAULT_MAX_COST`.
   */
  readonly maxCost?: number;
  /**
   * TALLY_REDIS_WAIT_REPLICAS / TALLY_REDIS_WAIT_TIMEOUT_MS: durable mode, an allowed decision is
   * answered only once replicas acknowledged its writes (`ReplicaWait`). Absent: off, one EVALSHA.
   */
  readonly replicaWait?: ReplicaWait;
  /** Circuit breaker; defaults to 5 consecutive failures, 1 s open. */
  readonly breaker?: BreakerOptions;
  /** Wall clock (ms) of the breaker and of degraded decisions' times; defaults to Date.now. */
  readonly clock?: () => number;
  /** The buffer of degraded decisions waiting for Redis; see `DEFAULT_DEGRADED_LEDGER` for defaults. */
  readonly degradedLedger?: Partial<DegradedLedgerOptions>;
  /**
   * TALLY_LOCAL_FALLBACK_SHARE / TALLY_LOCAL_FALLBACK_MAX_KEYS: the in-process limiter of
   * `local_fallback` policies (its share of every limit, its key bound). Default `DEFAULT_LOCAL_FALLBACK`.
   */
  readonly localFallback?: LocalLimiterOptions;
  /**
   * TALLY_OVERRIDE_CACHE_REFRESH_MS / TALLY_OVERRIDE_CACHE_MAX_ENTRIES: this process's copy of the
   * overrides, applied while Redis does not answer (`OverridesCache`). Absent: no copy, no poll.
   */
  readonly overrideCache?: OverrideCacheOptions;
  /** Tests only: a fixed decision time passed to the script instead of the Redis clock (`TIME`). */
  readonly scriptNow?: () => number | undefined;
}

/** Where the policy set in force comes from (the policy lib's store, which hot-reloads it). */
export interface PolicySetSource {
  /** The set in force now (PolicyStore of @tally/policy has exactly this getter). */
  readonly current: PolicySet;
}
