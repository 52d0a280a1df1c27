import type { OutboxPayload } from './outbox-payload.v1';

export type { OutboxPayload, OutboxPolicy, OutboxWindow } from './outbox-payload.v1';

/** The script's result for one window, in payload window order (policies flattened). */
export interface OutboxWindowResult {
  /** Units left after this decision. */
  readonly remaining: number;
  /** Milliseconds until the window resets (token bucket: until one unit refills). */
  readonly reset_ms: number;
  /** True when this window could not have afforded the cost (for shadow windows: it would deny). */
  readonly would_deny: boolean;
  /** Version of the runtime override of the window's policy in force, when there was one. */
  readonly override?: number;
  /** The override's limit of this window, when it set one (0: blocked). */
  readonly limit?: number;
}

/** One outbox stream entry as read with XREADGROUP: every field is a string. */
export interface OutboxEntry {
  /** `OutboxPayload` as JSON. */
  readonly p: string;
  /** Redis server time of the decision, epoch milliseconds, decimal. */
  readonly t: string;
  /** JSON array of `OutboxWindowResult`, one per payload window. */
  readonly r: string;
}

/** An outbox entry that cannot become an event; the relay must park it, never drop it silently. */
export class OutboxEntryError extends Error {
  constructor(reason: string) {
    super(`invalid outbox entry: ${reason}`);
    this.name = OutboxEntryError.name;
  }
}

/** A decoded entry; structure checked, values trusted (the engine wrote them). */
export interface DecodedOutboxEntry {
  readonly payload: OutboxPayload;
  readonly timeMs: number;
  /** One result per window, policies flattened in payload order; empty when `r` was absent. */
  readonly results: readonly OutboxWindowResult[];
}

export function decodeOutboxEntry(entry: { p: string; t: string; r?: string }): DecodedOutboxEntry {
  const payload = decodePayload(entry.p);
  const timeMs = decodeOutboxTime(entry.t);
  const results = entry.r === undefined || entry.r === '' ? [] : decodeOutboxResults(entry.r);
  const windows = payload.policies.reduce((n, policy) => n + policy.windows.length, 0);
  if (results.length > 0 && results.length !== windows) {
    throw new OutboxEntryError(`r has ${results.length} results for ${windows} windows`);
  }
  return { payload, timeMs, results };
}

function decodePayload(p: string): OutboxPayload {
  const value = parseJson(p, 'p');
  if (!isObject(value)) throw new OutboxEntryError('p is not a JSON object');
  if (value.v !== 1) throw new OutboxEntryError(`unknown payload version ${JSON.stringify(value.v)}`);
  if (typeof value.id !== 'string' || value.id === '') throw new OutboxEntryError('p.id is missing');
  if (typeof value.policy_set_version !== 'string') {
    throw new OutboxEntryError('p.policy_set_version is missing');
  }
  if (typeof value.cost !== 'number') throw new OutboxEntryError('p.cost is not a number');
  if (!isObject(value.selectors) || !isObject(value.attributes)) {
    throw new OutboxEntryError('p.selectors and p.attributes must be objects');
  }
  const policies = value.policies;
  if (!Array.isArray(policies)) throw new OutboxEntryError('p.policies is not an array');
  policies.forEach((policy: unknown, i) => {
    if (!isObject(policy) || typeof policy.name !== 'string' || !Array.isArray(policy.windows)) {
      throw new OutboxEntryError(`p.policies[${i}] needs a name and windows`);
    }
  });
  return value as unknown as OutboxPayload;
}

/** The last millisecond a JavaScript Date (and so an event's `time`) can hold: 275760-09-13. */
const MAX_DATE_MS = 8.64e15;

/**
 * Field `t` of every outbox entry: epoch milliseconds an event's `time` can be written from.
 * @throws OutboxEntryError
 */
export function decodeOutboxTime(t: string): number {
  const ms = /^\d{1,16}$/.test(t) ? Number(t) : NaN;
  if (!(ms <= MAX_DATE_MS)) throw new OutboxEntryError(`t is not epoch milliseconds: ${t}`);
  return ms;
}

/** Field `r` (non-empty): one result per window. @throws OutboxEntryError */
export function decodeOutboxResults(r: string): OutboxWindowResult[] {
  const value = parseJson(r, 'r');
  // Lua's cjson encodes an empty table as `{}`: that is the empty result list, not an error.
  if (isObject(value) && Object.keys(value).length === 0) return [];
  if (!Array.isArray(value)) throw new OutboxEntryError('r is not a JSON array');
  value.forEach((result: unknown, i) => {
    if (!isObject(result) || typeof result.remaining !== 'number' || typeof result.reset_ms !== 'number') {
      throw new OutboxEntryError(`r[${i}] needs remaining and reset_ms`);
    }
  });
  return value as OutboxWindowResult[];
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new OutboxEntryError(`${field} is not JSON`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
