import type { Algorithm } from '@tally/policy';
import { ALGORITHM_REGISTRY } from './algorithms/registry';

/**
 * The rate windows of one policy key share one Redis hash (`policyStateKey`; decide.lua, section
 * "Policy state hashes"; docs/adr/0008-one-hash-per-policy-key.md). Field `<window name>` holds the
 * window's state packed in one value; this field holds until when (epoch ms) the hash is kept. `_`
 * never begins a window name, so it can never be a window's field.
 */
export const POLICY_STATE_EXPIRY_FIELD = '_e';

/**
 * A window's packed state read back as named fields (`window-math.ts`'s `WindowState`, the state view):
 * its algorithm's codec in the registry (algorithms/registry.ts). Empty when absent, not this
 * algorithm's shape (decide.lua reads that as no state too), or not kept in the hash (concurrency).
 */
export function unpackWindowState(
  algorithm: Algorithm,
  value: string | null | undefined,
): Record<string, string> {
  const codec = ALGORITHM_REGISTRY[algorithm].state;
  if (value === null || value === undefined || codec === undefined) return {};
  return codec.unpack(value);
}
