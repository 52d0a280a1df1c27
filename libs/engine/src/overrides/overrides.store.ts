import { Inject, Injectable } from '@nestjs/common';
import { overrideHeadJson } from '@tally/events';
import { luaScript, scriptCommand, type RedisClient } from '@tally/redis';
import { newDecisionId } from '../plan/decision-id';
import { ENGINE_OPTIONS, ENGINE_REDIS } from '../engine.constants';
import type { EngineOptions } from '../engine.options';
import {
  encodeScope,
  overrideField,
  overrideIndexKey,
  overridesKey,
  shardKeys,
  shardOf,
} from '../store/keys';
import { decodeOverride, encodeLimits, encodeMeta, inForce } from './override-record';
import type { Override, OverrideChange, OverrideTarget } from './override.types';
import { encodeCursor, type ListQuery, type OverridePage } from './override-list';

const WRITE = luaScript(__dirname, 'override-write.lua', 'tallyOverrideWrite', 3);
type WriteReply = [number, number, string, string];
type Write = (
  k1: string,
  k2: string,
  k3: string,
  op: string,
  field: string,
  limits: string,
  meta: string,
  head: string,
) => Promise<WriteReply>;

/** What a change did: the override before and after it (null: none), and the change's version. */
export interface OverrideWritten {
  readonly version: number;
  readonly atMs: number;
  readonly before: Override | null;
  readonly after: Override | null;
}

/**
 * The Redis adapter of runtime overrides: one hash and one listing index per shard (keys.ts), written
 * by override-write.lua, read by decide.lua on the hot path. No validation here (override-validation.ts).
 */
@Injectable()
export class OverridesStore {
  private readonly write: Write;

  constructor(
    @Inject(ENGINE_REDIS) private readonly redis: RedisClient,
    @Inject(ENGINE_OPTIONS) private readonly options: EngineOptions,
  ) {
    this.write = scriptCommand<Write>(redis, WRITE);
  }

  set(target: OverrideTarget, change: OverrideChange): Promise<OverrideWritten> {
    return this.run(
      target,
      'set',
      encodeLimits(change.limits, change.expiresAtMs),
      encodeMeta(change.reason, change.setBy),
      headOf(target, 'set', change.setBy, change.reason),
    );
  }

  /**
   * Removes it; `null` when there was none in force (nothing written, nothing on the ledger).
   * `removedBy`: the NAME of the token that removes it, recorded with the change.
   */
  async remove(target: OverrideTarget, removedBy: string, reason = ''): Promise<OverrideWritten | null> {
    const written = await this.run(target, 'del', '', '', headOf(target, 'remove', removedBy, reason));
    return written.version === 0 ? null : written;
  }

  /** The override in force, or null (absent or expired). */
  async get(target: OverrideTarget): Promise<Override | null> {
    const { hash, field } = this.locate(target);
    const [[, time], [, value]] = (await this.redis.pipeline().time().hget(hash, field).exec()) as [
      [unknown, [string, string]],
      [unknown, string | null],
    ];
    if (value === null) return null;
    const override = decodeOverride(field, value);
    return override !== null && inForce(override, timeMs(time)) ? override : null;
  }

  /**
   * One page, in (shard, field) order: every shard's index (the tenant's shard alone with a tenant),
   * from the cursor on, narrowed to a policy by the lexicographic range of its fields. Index entries
   * whose override is gone or expired are skipped and cleaned up, so a page may hold fewer than
   * `limit` items while `nextCursor` is set; the listing ends when it is null.
   */
  async list(query: ListQuery): Promise<OverridePage> {
    const shards = this.options.shards;
    const scope = query.tenant === undefined ? undefined : encodeScope(query.tenant);
    const prefix =
      query.policy === undefined
        ? ''
        : scope === undefined
          ? `${query.policy}:`
          : `${query.policy}:${scope}:`;
    const only = query.tenant === undefined ? undefined : shardOf(query.tenant, shards);
    const from = query.cursor;
    const items: Override[] = [];
    const first = from?.shard ?? only ?? 0;
    for (let s = first; s < (only === undefined ? shards : only + 1); s++) {
      const shard = shardKeys(s);
      let after = from !== undefined && from.shard === s ? from.field : undefined;
      while (items.length < query.limit) {
        const lo = after !== undefined ? `(${after}` : prefix === '' ? '-' : `[${prefix}`;
        const hi = prefix === '' ? '+' : Buffer.concat([Buffer.from(`[${prefix}`), Buffer.from([0xff])]);
        const want = query.limit - items.length;
        const fields = await this.redis.zrangebylex(overrideIndexKey(shard), lo, hi, 'LIMIT', 0, want);
        if (fields.length === 0) break;
        after = fields[fields.length - 1];
        const pipeline = this.redis
          .pipeline()
          .time()
          .hmget(overridesKey(shard), ...fields);
        const [[, time], [, values]] = (await pipeline.exec()) as [
          [unknown, [string, string]],
          [unknown, (string | null)[]],
        ];
        const stale: string[] = [];
        fields.forEach((field, i) => {
          const value = values[i];
          const override = value === null ? null : decodeOverride(field, value);
          if (override === null || !inForce(override, timeMs(time))) stale.push(field);
          else if (scope === undefined || field.startsWith(`${override.policy}:${scope}:`))
            items.push(override);
        });
        if (stale.length > 0) await this.cleanUp(shard.shard, stale, timeMs(time));
        if (fields.length < want) break;
      }
      if (items.length >= query.limit && after !== undefined)
        return { items, nextCursor: encodeCursor({ shard: s, field: after }) };
    }
    return { items, nextCursor: null };
  }

  /** Index entries of overrides that are gone, and expired overrides: removed (the script re-checks expiry). */
  private async cleanUp(shard: number, fields: readonly string[], nowMs: number): Promise<void> {
    const keys = shardKeys(shard);
    for (const field of fields) {
      const value = await this.redis.hget(overridesKey(keys), field);
      const override = value === null ? null : decodeOverride(field, value);
      if (override === null || !inForce(override, nowMs))
        // No outbox entry: an expired override ending is no one's change (its `expires_at` is on the ledger).
        await this.write(overridesKey(keys), overrideIndexKey(keys), keys.outbox, 'del', field, '', '', '');
    }
  }

  private locate(target: OverrideTarget): { hash: string; index: string; outbox: string; field: string } {
    const tenant = target.tenant ?? undefined;
    const shard = shardKeys(shardOf(tenant, this.options.shards));
    return {
      hash: overridesKey(shard),
      index: overrideIndexKey(shard),
      outbox: shard.outbox,
      field: overrideField(target.policy, encodeScope(tenant), target.key),
    };
  }

  private async run(
    target: OverrideTarget,
    op: 'set' | 'del',
    limits: string,
    meta: string,
    head: string,
  ): Promise<OverrideWritten> {
    const { hash, index, outbox, field } = this.locate(target);
    const [version, atMs, before, after] = await this.write(
      hash,
      index,
      outbox,
      op,
      field,
      limits,
      meta,
      head,
    );
    return {
      version: Number(version),
      atMs: Number(atMs),
      before: before === '' ? null : decodeOverride(field, before),
      after: after === '' ? null : decodeOverride(field, after),
    };
  }
}

/** The outbox entry's head (@tally/events `OverrideHead`); the id is minted here, before the script runs. */
function headOf(target: OverrideTarget, action: 'set' | 'remove', setBy: string, reason: string): string {
  return overrideHeadJson({
    v: 1,
    id: newDecisionId(),
    action,
    policy: target.policy,
    key: target.key,
    ...(target.tenant === null ? {} : { tenant: target.tenant }),
    set_by: setBy,
    reason,
  });
}

function timeMs([seconds, micros]: [string, string]): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
