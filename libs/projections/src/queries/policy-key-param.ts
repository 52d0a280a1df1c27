import type { Parsed, QueryError } from './time-range';

export const MAX_POLICY_KEY_LENGTH = 2048;

/**
 * A policy key as a query names it: 1..2048 characters (code points), none a control character (C0,
 * DEL, C1; the engine never builds a key with one, so such a key can only be a typo or junk).
 */
export const POLICY_KEY = new RegExp(`^\\P{Cc}{1,${MAX_POLICY_KEY_LENGTH}}$`, 'u');

export const POLICY_KEY_MESSAGE = `key must be 1 to ${MAX_POLICY_KEY_LENGTH} characters without control characters`;

/**
 * The `key` of a usage query, if any. Per-key usage is kept per policy (`keys:` hashes), so a key
 * needs `policy`: the same key under two policies is two series, and summing them would count a
 * decision once per policy. Lists every problem.
 */
export function parsePolicyKeyParam(query: {
  readonly key?: string;
  readonly policy?: string;
}): Parsed<string | undefined> {
  const { key, policy } = query;
  if (key === undefined) return { ok: true, value: undefined };
  const errors: QueryError[] = [];
  if (!POLICY_KEY.test(key)) errors.push({ field: 'key', message: POLICY_KEY_MESSAGE });
  if (policy === undefined) {
    errors.push({ field: 'key', message: 'key needs policy: usage per key is kept per policy' });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: key };
}
