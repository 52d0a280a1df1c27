import { decodeStoredOverride } from '@tally/events';
import { decodeScope } from '../store/keys';
import type { Override } from './override.types';

/**
 * The stored form of an override, one value of the shard's override hash (keys.ts `overridesKey`):
 * `<version>;<expires_at ms or empty>;<window>=<limit>,…` — the part decide.lua parses — then a
 * newline and `{"reason","set_by","updated_at"}` as JSON, which the admin API and (through the outbox)
 * the relay read: @tally/events `decodeStoredOverride`. Pure.
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

/** Field `<policy>:<scope>:<key>` and its stored value → the override; null when not in this format. */
export function decodeOverride(field: string, value: string): Override | null {
  const head = /^([^:]+):([^:]+):(.*)$/s.exec(field);
  // The value's format is part of the outbox contract (the write script copies it into its entry).
  const stored = head === null ? null : decodeStoredOverride(value);
  if (head === null || stored === null) return null;
  return { policy: head[1], tenant: decodeScope(head[2]), key: head[3], ...stored };
}

/** An override in force at `nowMs` (not expired). */
export function inForce(override: Override, nowMs: number): boolean {
  return override.expiresAtMs === null || override.expiresAtMs > nowMs;
}
