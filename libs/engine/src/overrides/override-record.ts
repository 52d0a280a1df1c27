import { decodeScope } from '../keys';
import type { Override } from './override.types';

/**
 * The stored form of an override, one value of the shard's override hash (keys.ts `overridesKey`):
 * `<version>;<expires_at ms or empty>;<window>=<limit>,…` — the part decide.lua parses — then a
 * newline and `{"reason","set_by","updated_at"}` as JSON, which only the admin API reads. Pure.
 */

/** `<expires>;<limits>`: the part the write script prefixes with the version. */
export function encodeLimits(limits: Readonly<Record<string, number>>, expiresAtMs: number | null): string {
  const pairs = Object.entries(limits).map(([name, limit]) => `${name}=${limit}`);
  return `${expiresAtMs ?? ''};${pairs.join(',')}`;
}

/** The metadata JSON without `updated_at`, which the write script adds from the Redis clock. */
export function encodeMeta(reason: string, setBy: string): string {
  return JSON.stringify({ reason, set_by: setBy });
}

const COMPACT = /^(\d+);(\d*);([^\n]*)\n(.*)$/s;

/** Field `<policy>:<scope>:<key>` and its stored value → the override; null when not in this format. */
export function decodeOverride(field: string, value: string): Override | null {
  const head = /^([^:]+):([^:]+):(.*)$/s.exec(field);
  const body = COMPACT.exec(value);
  if (head === null || body === null) return null;
  const limits: Record<string, number> = {};
  for (const pair of body[3] === '' ? [] : body[3].split(',')) {
    const eq = pair.indexOf('=');
    limits[pair.slice(0, eq)] = Number(pair.slice(eq + 1));
  }
  let meta: { reason?: unknown; set_by?: unknown; updated_at?: unknown };
  try {
    meta = JSON.parse(body[4]) as typeof meta;
  } catch {
    return null;
  }
  return {
    policy: head[1],
    tenant: decodeScope(head[2]),
    key: head[3],
    limits,
    expiresAtMs: body[2] === '' ? null : Number(body[2]),
    reason: typeof meta.reason === 'string' ? meta.reason : '',
    setBy: typeof meta.set_by === 'string' ? meta.set_by : '',
    version: Number(body[1]),
    updatedAtMs: typeof meta.updated_at === 'number' ? meta.updated_at : 0,
  };
}

/** An override in force at `nowMs` (not expired). */
export function inForce(override: Override, nowMs: number): boolean {
  return override.expiresAtMs === null || override.expiresAtMs > nowMs;
}
