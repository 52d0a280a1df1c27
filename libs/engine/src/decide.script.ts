import { defineScript, luaScript, type RedisClient } from '@tally/redis';
import type { DecisionPlan } from './plan/decision-plan';

/**
 * The custom command `tallyDecide`; `numkeys` is its first argument (a decision has 2 + windows keys,
 * + the idempotency record, + the lease record, + the shard's override hash, each only when used).
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
  /** When its policy had an override in force: the window's effective limit and the override's version. */
  readonly override?: { readonly limit: number; readonly version: number };
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
  const fields = plan.overrideFields;
  const args: (string | number)[] = [
    2 +
      windows.length +
      (idem === undefined ? 0 : 1) +
      (lease === undefined ? 0 : 1) +
      (fields.length === 0 ? 0 : 1),
  ];
  args.push(plan.shard.outbox, plan.shard.denials);
  for (const w of windows) args.push(w.redisKey);
  if (idem !== undefined) args.push(idem);
  if (lease !== undefined) args.push(lease.redisKey);
  // The override hash is the last key when present (decide.lua reads it as KEYS[#KEYS]).
  if (fields.length > 0) args.push(plan.overridesRedisKey);
  args.push(
    nowMs === undefined ? '' : nowMs,
    plan.cost,
    idem === undefined ? 0 : idempotencyTtlMs,
    plan.fingerprint,
    plan.payloadJson,
    windows.length,
  );
  // The algorithm's letter then the window's name: its field in the policy state hash (decide.lua).
  for (const w of windows)
    args.push(ALGORITHM_CODES[w.algorithm] + w.name, w.limit, w.periodMs, w.mode, w.denialTag);
  // Overrides: per applicable policy its field, first window (1-based) and window count.
  args.push(fields.length);
  let first = 1;
  for (let j = 0; j < fields.length; j++) {
    const count = plan.policies[j].policy.windows.length;
    args.push(fields[j], first, count);
    first += count;
  }
  // Then a lease's id and release payload (after the overrides: decide.lua finds them by P).
  if (lease !== undefined) args.push(lease.id, lease.payloadJson);
  return args;
}

/** Runs the command on a client or a pipeline (the same argument list). */
export function callDecide<T>(target: unknown, args: (string | number)[]): T {
  return (target as Record<string, (...a: (string | number)[]) => T>)[DECIDE.name](...args);
}

/**
 * `windowCount`: the plan's windows. A reply longer than 5 + 3 per window carries the overrides
 * trailer (2 per window: effective limit, version); without a count (a replay's stored windows, which
 * never have one) every value after the head is a window's.
 */
export function parseDecideReply(reply: unknown, windowCount?: number): ScriptOutcome {
  if (!Array.isArray(reply) || reply.length < 5) throw new Error('decide.lua: malformed reply');
  const [status, nowMs, retryAfterMs, binding, stored] = reply as [number, number, number, number, string];
  const windows: ScriptWindow[] = [];
  // The reply: the windows' triples; then, when the decision took a lease, its expiry (a replay's
  // stored windows hold it too); then, when an override was in force (never in a replay), per window
  // its effective limit and version. The override trailer has 2 per window, so a lease's expiry is
  // what makes the rest odd. Without `windowCount` (the bare reply in unit tests) there is no trailer.
  const counted = windowCount !== undefined && status !== 2;
  const w = counted ? windowCount : Math.floor((reply.length - 5) / 3);
  const extra = reply.length - 5 - 3 * w;
  const leaseExpiresAt = extra % 2 === 1 ? Number(reply[5 + 3 * w]) : undefined;
  const trailer = counted && extra >= 2 ? 5 + 3 * w + (leaseExpiresAt === undefined ? 0 : 1) : 0;
  for (let i = 5, k = 0; k < w; i += 3, k++) {
    const version = trailer === 0 ? 0 : Number(reply[trailer + 2 * k + 1]);
    windows.push({
      remaining: Number(reply[i]),
      resetMs: Number(reply[i + 1]),
      wouldDeny: Number(reply[i + 2]) === 1,
      ...(version > 0 ? { override: { limit: Number(reply[trailer + 2 * k]), version } } : {}),
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
