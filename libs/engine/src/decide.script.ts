import { defineScript, luaScript, type RedisClient } from '@tally/redis';
import type { DecisionPlan } from './decision-plan';

/**
 * The custom command `tallyDecide`; `numkeys` is its first argument (a decision has 2 + windows (+1
 * idempotency record) (+1 lease record) keys).
 */
const DECIDE = luaScript(__dirname, 'decide.lua', 'tallyDecide');

/** What decide.lua answered, parsed (see the reply legend at the top of the script). */
export type ScriptOutcome =
  | {
      readonly kind: 'allowed' | 'denied' | 'peek';
      readonly nowMs: number;
      readonly retryAfterMs: number;
      readonly binding: number;
      readonly windows: readonly ScriptWindow[];
      /** Allowed with a lease: when it expires (Redis time, epoch ms). */
      readonly leaseExpiresAt?: number;
    }
  | {
      readonly kind: 'replayed';
      readonly nowMs: number;
      readonly storedPayload: string;
      readonly windows: readonly ScriptWindow[];
      /** The replayed decision took a lease: its expiry as first answered. */
      readonly leaseExpiresAt?: number;
    }
  | { readonly kind: 'conflict'; readonly nowMs: number };

export interface ScriptWindow {
  readonly remaining: number;
  readonly resetMs: number;
  readonly wouldDeny: boolean;
}

const ALGORITHM_CODES = {
  fixed_window: 'f',
  sliding_window: 's',
  token_bucket: 't',
  calendar_month: 'c',
  concurrency: 'n',
} as const;

/** Registers the command on a client (idempotent per client). */
export function defineDecide(redis: RedisClient): void {
  defineScript(redis, DECIDE);
}

/** `numkeys, ...KEYS, ...ARGV` for the command, in the script's legend order. */
export function decideArgs(
  plan: DecisionPlan,
  idempotencyTtlMs: number,
  nowMs?: number,
): (string | number)[] {
  // One array, filled in order: this runs for every decision.
  const windows = plan.windows;
  const idem = plan.idempotencyRedisKey;
  const lease = plan.lease;
  const args: (string | number)[] = [
    2 + windows.length + (idem === undefined ? 0 : 1) + (lease === undefined ? 0 : 1),
  ];
  args.push(plan.shard.outbox, plan.shard.denials);
  for (const w of windows) args.push(w.redisKey);
  if (idem !== undefined) args.push(idem);
  if (lease !== undefined) args.push(lease.redisKey);
  args.push(
    nowMs === undefined ? '' : nowMs,
    plan.cost,
    idem === undefined ? 0 : idempotencyTtlMs,
    plan.fingerprint,
    plan.payloadJson,
    windows.length,
  );
  for (const w of windows) args.push(ALGORITHM_CODES[w.algorithm], w.limit, w.periodMs, w.mode, w.denialTag);
  if (lease !== undefined) args.push(lease.id, lease.payloadJson);
  return args;
}

/** Runs the command on a client or a pipeline (the same argument list). */
export function callDecide<T>(target: unknown, args: (string | number)[]): T {
  return (target as Record<string, (...a: (string | number)[]) => T>)[DECIDE.name](...args);
}

export function parseDecideReply(reply: unknown): ScriptOutcome {
  if (!Array.isArray(reply) || reply.length < 5) throw new Error('decide.lua: malformed reply');
  const [status, nowMs, retryAfterMs, binding, stored] = reply as [number, number, number, number, string];
  const windows: ScriptWindow[] = [];
  // A lease's expiry, when the decision took one, follows the windows' triples as one last element.
  const leaseExpiresAt = (reply.length - 5) % 3 === 1 ? Number(reply[reply.length - 1]) : undefined;
  for (let i = 5; i + 2 < reply.length; i += 3) {
    windows.push({
      remaining: Number(reply[i]),
      resetMs: Number(reply[i + 1]),
      wouldDeny: Number(reply[i + 2]) === 1,
    });
  }
  switch (status) {
    case 0:
      return { kind: 'denied', nowMs, retryAfterMs, binding, windows };
    case 1:
      return leaseExpiresAt === undefined
        ? { kind: 'allowed', nowMs, retryAfterMs: 0, binding: 0, windows }
        : { kind: 'allowed', nowMs, retryAfterMs: 0, binding: 0, windows, leaseExpiresAt };
    case 2:
      return leaseExpiresAt === undefined
        ? { kind: 'replayed', nowMs, storedPayload: stored, windows }
        : { kind: 'replayed', nowMs, storedPayload: stored, windows, leaseExpiresAt };
    case 3:
      return { kind: 'conflict', nowMs };
    case 4:
      return { kind: 'peek', nowMs, retryAfterMs: 0, binding: 0, windows };
    default:
      throw new Error(`decide.lua: unknown status ${String(status)}`);
  }
}
