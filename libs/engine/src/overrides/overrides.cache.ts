import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RedisClient } from '@tally/redis';
import type { DecisionObserver } from '../decision-observer';
import { DECISION_OBSERVER, ENGINE_OPTIONS, ENGINE_REDIS } from '../engine.constants';
import type { EngineOptions } from '../engine.options';
import { allShardKeys, overridesKey } from '../store/keys';
import {
  OverrideCopy,
  type HeldOverride,
  type OverrideCacheOptions,
  type OverrideCacheStats,
} from './override-copy';

export type { OverrideCacheOptions, OverrideCacheStats };

/** Fields per HSCAN call: a shard with many overrides is read in slices, never one long command. */
const SCAN_COUNT = 1_000;

/**
 * This process's copy of the runtime overrides (`OverrideCopy`), for the decisions it makes while
 * Redis does not answer. A **poll**: every `refreshMs` it reads each shard's version (`#seq` of the
 * override hash, one HGET per shard, concurrently) and reads again (HSCAN) only the shards whose
 * version moved. Not keyspace notifications: they need `notify-keyspace-events` set on the server
 * (often not allowed on managed Redis), they are fire-and-forget (a notification lost on a reconnect
 * would leave a block out until the next change, so a poll would be needed anyway), and on Cluster
 * each node must be subscribed apart. The poll's cost is one HGET per shard per period; a change
 * costs one read of its shard. A failed round keeps the copy as it was, and its age grows.
 * Without `EngineOptions.overrideCache` nothing is polled and nothing is held (tools, tests).
 */
@Injectable()
export class OverridesCache implements OnModuleInit, OnModuleDestroy {
  private readonly copy: OverrideCopy | undefined;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<boolean> | undefined;
  private refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(ENGINE_REDIS) private readonly redis: RedisClient,
    @Inject(ENGINE_OPTIONS) private readonly options: EngineOptions,
    @Optional() @Inject(DECISION_OBSERVER) private readonly observer?: DecisionObserver,
  ) {
    const settings = options.overrideCache;
    this.copy = settings === undefined ? undefined : new OverrideCopy(settings.maxEntries);
    this.clock = options.clock ?? Date.now;
  }

  onModuleInit(): void {
    const settings = this.options.overrideCache;
    if (settings === undefined) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), settings.refreshMs);
    // The poll never keeps the process alive on its own.
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The override of a decision's policy (its shard, its `overrideField`) in force now, if held. */
  lookup(shard: number, field: string): HeldOverride | undefined {
    return this.copy?.lookup(shard, field, this.clock());
  }

  /** The shard's override version the copy holds (every change up to it is in); undefined: not read. */
  versionOf(shard: number): number | undefined {
    return this.copy?.versionOf(shard);
  }

  stats(): OverrideCacheStats {
    return {
      ageMs: this.clock() - this.refreshedAt,
      entries: this.copy?.size ?? 0,
      skipped: this.copy?.skipped ?? { blocks: 0, limits: 0 },
    };
  }

  /** One round (joined if one is running): true when every shard was read. */
  refresh(): Promise<boolean> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
      this.observer?.onOverrideCache?.(this.stats());
    });
    return this.running;
  }

  private async round(): Promise<boolean> {
    const copy = this.copy;
    if (copy === undefined) return false;
    const startedAt = this.clock();
    try {
      const shards = allShardKeys(this.options.shards);
      const versions = await Promise.all(shards.map((s) => this.redis.hget(overridesKey(s), '#seq')));
      for (const shard of shards) {
        const version = Number(versions[shard.shard] ?? 0);
        if (copy.versionOf(shard.shard) === version) continue;
        await this.load(copy, shard.shard, overridesKey(shard), version);
      }
      this.refreshedAt = startedAt;
      return true;
    } catch {
      // Redis is not answering: the copy stays as last read, which is what it is for.
      return false;
    }
  }

  /**
   * Reads the shard's hash after its version was read: every change up to `version` is in what the
   * scan returns (a later one may be too; the next round reads the shard again as its version moved).
   */
  private async load(copy: OverrideCopy, shard: number, key: string, version: number): Promise<void> {
    const builder = copy.begin(shard, version, this.clock());
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, 'COUNT', SCAN_COUNT);
      for (let i = 0; i < flat.length; i += 2)
        if (!flat[i].startsWith('#')) builder.add(flat[i], flat[i + 1]);
      cursor = next;
    } while (cursor !== '0');
    builder.commit();
  }
}
