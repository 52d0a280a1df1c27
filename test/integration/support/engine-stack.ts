import { allShardKeys, EngineService, type EngineOptions, type ShardKeys } from '@tally/engine';
import type { Policy, PolicySet } from '@tally/policy';
import { testEnv, uniqueName } from '@tally/testing';
import { Redis, type RedisOptions } from 'ioredis';

export interface EngineStackOptions {
  /** Its own database, so no relay of other suites drains the outbox streams a test inspects. */
  readonly db: number;
  readonly shards: number;
  readonly tokenSecret: string;
  /** Over the defaults (a 5 s backend deadline, a minute of idempotency), e.g. `scriptNow`, `clock`. */
  readonly engine?: Partial<EngineOptions>;
  /** The engine's client beyond `enableOfflineQueue: false` (production's), e.g. `protocol: 2`. */
  readonly sutRedis?: RedisOptions;
  /** Keys of each shard to delete at `close` besides its outbox stream and denials. */
  readonly alsoDelete?: (keys: ShardKeys) => string[];
}

/**
 * The engine on a REAL Redis as the integration suites use it: a plain client for the test's own
 * reads, the engine's client and `EngineService`, the policy set the use cases read (`use` swaps it)
 * and the options to build them with. `close` deletes every shard's outbox and denials and quits.
 */
export class EngineStack {
  readonly source: { current: PolicySet } = { current: { version: 'empty', policies: [], loadedAt: 0 } };

  private constructor(
    readonly redis: Redis,
    readonly sutRedis: Redis,
    readonly options: EngineOptions,
    readonly engine: EngineService,
    private readonly settings: EngineStackOptions,
  ) {}

  static async start(settings: EngineStackOptions): Promise<EngineStack> {
    const url = new URL(testEnv().redisUrl);
    url.pathname = `/${settings.db}`;
    const redis = new Redis(url.toString());
    const sutRedis = new Redis(url.toString(), { enableOfflineQueue: false, ...settings.sutRedis });
    // No offline queue: a command sent before the connection is ready would fail, so wait for it.
    await sutRedis.ping().catch(() => new Promise((r) => sutRedis.once('ready', r)));
    const options: EngineOptions = {
      redis: { mode: 'single', url: url.toString() },
      shards: settings.shards,
      backendTimeoutMs: 5_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: settings.tokenSecret,
      ...settings.engine,
    };
    return new EngineStack(redis, sutRedis, options, new EngineService(sutRedis, options), settings);
  }

  /** These policies, as a new policy set version, from the next decision on. */
  use(...policies: Policy[]): void {
    this.source.current = { version: uniqueName('set'), policies, loadedAt: 0 };
  }

  async close(): Promise<void> {
    const keys = allShardKeys(this.settings.shards).flatMap((k) => [
      k.outbox,
      k.denials,
      ...(this.settings.alsoDelete?.(k) ?? []),
    ]);
    await this.redis.del(...keys);
    await Promise.all([this.redis.quit(), this.sutRedis.quit()]);
  }
}
