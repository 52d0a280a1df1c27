import { join } from 'node:path';
import { defineScript, luaScript, type RedisClient } from '@tally/redis';

/** The custom command `tallyRelease` (2 keys: the lease record, the shard's outbox). */
const RELEASE = luaScript(join(__dirname, '..'), 'release.lua', 'tallyRelease', 2);

/** What release.lua answered (see its legend). */
export interface ReleaseReply {
  readonly status: 'unknown' | 'released' | 'already_released' | 'expired' | 'forbidden';
  readonly expiresAtMs: number;
  /** When it was released (now, or by the earlier call); 0 otherwise. */
  readonly releasedAtMs: number;
}

const STATUSES = ['unknown', 'released', 'already_released', 'expired', 'forbidden'] as const;

export function defineRelease(redis: RedisClient): void {
  defineScript(redis, RELEASE);
}

/** `tenants`: the caller token's tenant list, or null for a token valid for every tenant. */
export function callRelease(
  redis: RedisClient,
  keys: { record: string; outbox: string },
  leaseId: string,
  tenants: readonly string[] | null,
  nowMs?: number,
): Promise<unknown> {
  const command = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[
    RELEASE.name
  ];
  return command.call(
    redis,
    keys.record,
    keys.outbox,
    nowMs === undefined ? '' : nowMs,
    leaseId,
    tenants === null ? '' : tenants.join('\n'),
  );
}

export function parseReleaseReply(reply: unknown): ReleaseReply {
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error('release.lua: malformed reply');
  const status = STATUSES[Number(reply[0])];
  if (status === undefined) throw new Error(`release.lua: unknown status ${String(reply[0])}`);
  return { status, expiresAtMs: Number(reply[1]), releasedAtMs: Number(reply[2]) };
}
