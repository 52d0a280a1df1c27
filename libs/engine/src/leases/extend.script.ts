import { join } from 'node:path';
import { defineScript, luaScript, type RedisClient } from '@tally/redis';

/** The custom command `tallyExtend` (1 key: the lease record). */
const EXTEND = luaScript(join(__dirname, '..'), 'extend.lua', 'tallyExtend', 1);

/** What extend.lua answered (see its legend). */
export interface ExtendReply {
  readonly status:
    'unknown' | 'extended' | 'released' | 'expired' | 'forbidden' | 'ttl_too_long' | 'not_in_force';
  /** The lease's expiry: the new one when `extended`, else as it stands (0 when `unknown`). */
  readonly expiresAtMs: number;
  /** The script's clock. */
  readonly nowMs: number;
  /** The longest TTL an extension may ask for (`extended`, `ttl_too_long`); 0 otherwise. */
  readonly maxTtlMs: number;
}

const STATUSES = [
  'unknown',
  'extended',
  'released',
  'expired',
  'forbidden',
  'ttl_too_long',
  'not_in_force',
] as const;

export function defineExtend(redis: RedisClient): void {
  defineScript(redis, EXTEND);
}

/** What one extend.lua call needs besides its key (see its ARGV legend). */
export interface ExtendArgs {
  readonly leaseId: string;
  /** The caller token's tenant list, or null for a token valid for every tenant. */
  readonly tenants: readonly string[] | null;
  /** The TTL asked for; undefined = the longest allowed. */
  readonly ttlMs: number | undefined;
  /** `leaseTtlsInForce` of the policy set in force. */
  readonly ttlsInForce: string;
}

export function callExtend(
  redis: RedisClient,
  record: string,
  args: ExtendArgs,
  nowMs?: number,
): Promise<unknown> {
  const command = (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[
    EXTEND.name
  ];
  return command.call(
    redis,
    record,
    nowMs === undefined ? '' : nowMs,
    args.leaseId,
    args.tenants === null ? '' : args.tenants.join('\n'),
    args.ttlMs === undefined ? '' : args.ttlMs,
    args.ttlsInForce,
  );
}

export function parseExtendReply(reply: unknown): ExtendReply {
  if (!Array.isArray(reply) || reply.length !== 4) throw new Error('extend.lua: malformed reply');
  const status = STATUSES[Number(reply[0])];
  if (status === undefined) throw new Error(`extend.lua: unknown status ${String(reply[0])}`);
  return {
    status,
    expiresAtMs: Number(reply[1]),
    nowMs: Number(reply[2]),
    maxTtlMs: Number(reply[3]),
  };
}
