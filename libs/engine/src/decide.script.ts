import { defineScript, type LuaScript, type RedisClient } from '@tally/redis';
import { DECIDE_ARGV, DECIDE_REPLY, fieldIndex, sectionOf, type FieldsOf } from './algorithms/decide-layout';
import { decideSource } from './algorithms/decide-source';
import { ALGORITHM_REGISTRY } from './algorithms/registry';
import type { DecisionPlan, PlannedWindow } from './plan/decision-plan';

/**
 * The custom command `tallyDecide`; `numkeys` is its first argument (a decision has 2 + windows keys,
 * + the idempotency record, + the lease record, + the shard's override hash, each only when used).
 */
const DECIDE: LuaScript = { name: 'tallyDecide', lua: decideSource() };

/** The script as loaded (its SHA is what EVALSHA names). */
export function decideLua(): string {
  return DECIDE.lua;
}

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

/** Registers the command on a client (idempotent per client). */
export function defineDecide(redis: RedisClient): void {
  defineScript(redis, DECIDE);
}

interface ArgvContext {
  readonly plan: DecisionPlan;
  readonly idempotencyTtlMs: number;
  readonly nowMs: number | undefined;
}
type Encoders<N extends (typeof DECIDE_ARGV)[number]['name'], T> = {
  readonly [F in FieldsOf<typeof DECIDE_ARGV, N>]: (x: T) => string | number;
};

// One encoder per field of each ARGV section (decide-layout.ts): the mapped types make a field of the
// table without its encoder a compile error, and `push` writes them in the table's order.
const HEADER: Encoders<'header', ArgvContext> = {
  now: (c) => (c.nowMs === undefined ? '' : c.nowMs),
  cost: (c) => c.plan.cost,
  idempotency_ttl: (c) => (c.plan.idempotencyRedisKey === undefined ? 0 : c.idempotencyTtlMs),
  fingerprint: (c) => c.plan.fingerprint,
  payload: (c) => c.plan.payloadJson,
  window_count: (c) => c.plan.windows.length,
};
const WINDOW: Encoders<'window', PlannedWindow> = {
  // The algorithm's letter then the window's name: its field in the policy state hash (decide.lua).
  code: (w) => ALGORITHM_REGISTRY[w.algorithm].letter + w.name,
  limit: (w) => w.limit,
  period: (w) => w.periodMs,
  mode: (w) => w.mode,
  tag: (w) => w.denialTag,
  param: (w) => ALGORITHM_REGISTRY[w.algorithm].param?.(w) ?? 0,
};
interface OverrideArg {
  readonly field: string;
  readonly first: number;
  readonly count: number;
}
const OVERRIDES: Encoders<'overrides', number> = { override_count: (n) => n };
const OVERRIDE: Encoders<'override', OverrideArg> = {
  field: (o) => o.field,
  first: (o) => o.first,
  count: (o) => o.count,
};
const LEASES: Encoders<'leases', number> = { lease_count: (n) => n };
const LEASE: Encoders<'lease', NonNullable<DecisionPlan['lease']>> = {
  id: (l) => l.id,
  payload: (l) => l.payloadJson,
};

const ARGV_FIELDS = {
  header: sectionOf(DECIDE_ARGV, 'header').fields,
  window: sectionOf(DECIDE_ARGV, 'window').fields,
  overrides: sectionOf(DECIDE_ARGV, 'overrides').fields,
  override: sectionOf(DECIDE_ARGV, 'override').fields,
  leases: sectionOf(DECIDE_ARGV, 'leases').fields,
  lease: sectionOf(DECIDE_ARGV, 'lease').fields,
};

function push<T>(
  args: (string | number)[],
  fields: readonly string[],
  encoders: Readonly<Record<string, (x: T) => string | number>>,
  x: T,
): void {
  for (const f of fields) args.push(encoders[f](x));
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
  push(args, ARGV_FIELDS.header, HEADER, { plan, idempotencyTtlMs, nowMs });
  for (const w of windows) push(args, ARGV_FIELDS.window, WINDOW, w);
  // Overrides: per applicable policy its field, first window (1-based) and window count.
  push(args, ARGV_FIELDS.overrides, OVERRIDES, fields.length);
  let first = 1;
  for (let j = 0; j < fields.length; j++) {
    const count = plan.policies[j].policy.windows.length;
    push(args, ARGV_FIELDS.override, OVERRIDE, { field: fields[j], first, count });
    first += count;
  }
  push(args, ARGV_FIELDS.leases, LEASES, lease === undefined ? 0 : 1);
  if (lease !== undefined) push(args, ARGV_FIELDS.lease, LEASE, lease);
  return args;
}

/** Runs the command on a client or a pipeline (the same argument list). */
export function callDecide<T>(target: unknown, args: (string | number)[]): T {
  return (target as Record<string, (...a: (string | number)[]) => T>)[DECIDE.name](...args);
}

// Reply positions (0-based) from the table: the head's fields, and offsets within each section.
const at = (section: string, field: string): number => fieldIndex(DECIDE_REPLY, section, field);
const HEAD = {
  n: sectionOf(DECIDE_REPLY, 'head').fields.length,
  status: at('head', 'status'),
  nowMs: at('head', 'now_ms'),
  retryAfterMs: at('head', 'retry_after_ms'),
  binding: at('head', 'binding'),
  stored: at('head', 'stored'),
  windowCount: at('head', 'window_count'),
};
const WIN = {
  n: sectionOf(DECIDE_REPLY, 'window').fields.length,
  remaining: at('window', 'remaining'),
  resetMs: at('window', 'reset_ms'),
  wouldDeny: at('window', 'would_deny'),
};
const LEASES_N = sectionOf(DECIDE_REPLY, 'leases').fields.length;
const LEASE_COUNT = at('leases', 'lease_count');
const LEASE_N = sectionOf(DECIDE_REPLY, 'lease').fields.length;
const LEASE_EXPIRES = at('lease', 'expires_ms');
const OVERRIDES_N = sectionOf(DECIDE_REPLY, 'overrides').fields.length;
const OVERRIDE_COUNT = at('overrides', 'override_count');
const OV = {
  n: sectionOf(DECIDE_REPLY, 'override').fields.length,
  limit: at('override', 'limit'),
  version: at('override', 'version'),
};

/**
 * Reads the reply section by section, each repeated section by the count before it (decide-layout.ts).
 * `windowCount`, when given, is the plan's: a fresh decision's reply must have as many windows.
 */
export function parseDecideReply(reply: unknown, windowCount?: number): ScriptOutcome {
  if (!Array.isArray(reply) || reply.length < HEAD.n) throw new Error('decide.lua: malformed reply');
  const status = Number(reply[HEAD.status]);
  const nowMs = Number(reply[HEAD.nowMs]);
  const w = Number(reply[HEAD.windowCount]);
  if (windowCount !== undefined && status !== 2 && status !== 3 && w !== windowCount)
    throw new Error(`decide.lua: ${String(w)} windows in the reply, ${String(windowCount)} planned`);
  let pos = HEAD.n + WIN.n * w;
  const leases = Number(reply[pos + LEASE_COUNT]);
  pos += LEASES_N;
  const leaseExpiresAt = leases > 0 ? Number(reply[pos + LEASE_EXPIRES]) : undefined;
  pos += LEASE_N * leases;
  const overrides = Number(reply[pos + OVERRIDE_COUNT]);
  pos += OVERRIDES_N;
  if (Number.isNaN(overrides) || reply.length !== pos + OV.n * overrides)
    throw new Error('decide.lua: malformed reply');
  const windows: ScriptWindow[] = [];
  for (let k = 0, i = HEAD.n; k < w; k++, i += WIN.n) {
    const o = pos + OV.n * k;
    const version = k < overrides ? Number(reply[o + OV.version]) : 0;
    windows.push({
      remaining: Number(reply[i + WIN.remaining]),
      resetMs: Number(reply[i + WIN.resetMs]),
      wouldDeny: Number(reply[i + WIN.wouldDeny]) === 1,
      ...(version > 0 ? { override: { limit: Number(reply[o + OV.limit]), version } } : {}),
    });
  }
  const retryAfterMs = Number(reply[HEAD.retryAfterMs]);
  const binding = Number(reply[HEAD.binding]);
  const stored = String(reply[HEAD.stored]);
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
