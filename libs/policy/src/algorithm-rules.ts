import type { Algorithm, WindowSpec } from './policy.types';

/**
 * What the policy file and its checks need to know of each algorithm: the policy-facing half of the
 * algorithm registry (the engine's half, `libs/engine/src/algorithms/registry.ts`, is keyed by the
 * same `Algorithm` and holds the state encoding, the maths and the Lua). A mapped type: an algorithm
 * in `ALGORITHMS` without its rules does not compile.
 */
export interface AlgorithmRules {
  /**
   * Which field gives the window's duration (compiled into `periodMs`): `period`, `lease_ttl`
   * (concurrency: how long a lease holds its units), or `month` (calendar months: `1mo` or nothing).
   */
  readonly duration: 'period' | 'lease_ttl' | 'month';
  /**
   * How many times `limit × period (ms)` (and `burst × period (ms)`) the window maths holds in one
   * number: past 2^53 the doubles of TypeScript and Lua round and the limit stops being exact. Absent:
   * the algorithm counts plain units.
   */
  readonly scale?: { readonly limit?: number; readonly burst?: number };
  /** Takes a `burst` (required then; refused on the other algorithms). */
  readonly burst?: true;
}

export const ALGORITHM_RULES: { readonly [A in Algorithm]: AlgorithmRules } = {
  fixed_window: { duration: 'period' },
  // previous × time left + (current + cost) × period ≤ 3 × limit × period (cost ≤ limit)
  sliding_window: { duration: 'period', scale: { limit: 3 } },
  // tokens kept in token × ms: capacity = limit × period
  token_bucket: { duration: 'period', scale: { limit: 1 } },
  calendar_month: { duration: 'month' },
  concurrency: { duration: 'lease_ttl' },
  // its debt kept in ms × limit: (burst + cost) × period ≤ 2 × burst × period (cost ≤ burst)
  gcra: { duration: 'period', scale: { limit: 1, burst: 2 }, burst: true },
};

/** The largest `limit × period` (or `burst × period`) a window of this algorithm may have; undefined: none. */
export function scaleBound(algorithm: Algorithm, of: 'limit' | 'burst'): number | undefined {
  const factor = ALGORITHM_RULES[algorithm].scale?.[of];
  return factor === undefined ? undefined : Math.floor(Number.MAX_SAFE_INTEGER / factor);
}

/** The largest cost the window can ever allow: a larger one never fits (the engine refuses it, 413). */
export function capacityOf(window: Pick<WindowSpec, 'limit' | 'burst'>): number {
  return window.burst ?? window.limit;
}
