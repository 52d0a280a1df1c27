import type { Algorithm } from '@tally/policy';

/**
 * The rate windows of one policy key share one Redis hash (`policyStateKey`; decide.lua, section
 * "Policy state hashes"; docs/adr/0008-one-hash-per-policy-key.md). Field `<window name>` holds the
 * window's state packed in one value; this field holds until when (epoch ms) the hash is kept. `_`
 * never begins a window name, so it can never be a window's field.
 */
export const POLICY_STATE_EXPIRY_FIELD = '_e';

const TOKENS = /^t(\d+):(\d+)$/;
const COUNTERS = /^(\d+):(\d+)(?::(\d+))?$/;

/**
 * A window's packed state read back as the fields one hash per window held before (and that
 * `window-math.ts` and the state view name): `b`, `c` (fixed_window, calendar_month), `b`, `c`, `p`
 * (sliding_window), `t`, `ts` (token_bucket). Empty when absent or not this algorithm's shape, which
 * decide.lua reads as no state too (a counter reads another counter's `<b>:<c>`, as the shared `b`
 * and `c` fields were read before; a token bucket and a counter never read each other's).
 */
export function unpackWindowState(
  algorithm: Algorithm,
  value: string | null | undefined,
): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (algorithm === 'token_bucket') {
    const m = TOKENS.exec(value);
    return m === null ? {} : { t: m[1], ts: m[2] };
  }
  const m = COUNTERS.exec(value);
  if (m === null) return {};
  if (algorithm === 'sliding_window' && m[3] !== undefined) return { b: m[1], c: m[2], p: m[3] };
  return { b: m[1], c: m[2] };
}
