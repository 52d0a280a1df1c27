/**
 * A window's state and one decision's result, shared by every algorithm (windows.ts, gcra.ts).
 *
 * State is the window's packed field of the policy state hash read back field by field (all numbers):
 * - fixed_window / calendar_month: `b` bucket index, `c` units counted in that bucket;
 * - sliding_window: `b` current bucket index, `c` its count, `p` the previous bucket's count;
 * - token_bucket: `t` tokens × periodMs (an integer: refill is `limit` per ms in these units, so the
 *   maths is exact integer arithmetic), `ts` the ms of the last commit;
 * - gcra: `tat` + `sub` / limit, its theoretical arrival time (gcra.ts).
 * A missing hash is the empty state (nothing counted, a full bucket).
 *
 * Semantics shared by all algorithms:
 * - a cost is allowed iff the window can afford all of it; a denial changes nothing (`nextState` is
 *   the input state), and so does cost 0 (a peek);
 * - `remaining` is what is left after this decision (after the commit when allowed), never negative;
 * - `resetMs` is how long until the window is back to its full limit given what is counted now;
 * - `retryAfterMs` (denials only) is the earliest wait after which the same cost would be allowed,
 *   assuming nothing else is spent meanwhile; it is exact, never early.
 * Integer products stay exact while `limit × periodMs` < 2^53 (e.g. a limit of 3 million per 31 days).
 */
export interface WindowState {
  readonly b?: number;
  readonly c?: number;
  readonly p?: number;
  readonly t?: number;
  readonly ts?: number;
  /** gcra: its theoretical arrival time, `tat` + `sub` / limit ms (`sub` < limit keeps it exact). */
  readonly tat?: number;
  readonly sub?: number;
}

/** What the maths reads of a window (the algorithm is chosen by the caller's dispatch). */
export interface WindowParams {
  /** Units per period (token bucket: capacity). */
  readonly limit: number;
  readonly periodMs: number;
  /** gcra only: how many units may pass at once. */
  readonly burst?: number;
}

export interface WindowResult {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  /** 0 when allowed. */
  readonly retryAfterMs: number;
  /** The hash after the commit (the input state when denied or cost is 0). */
  readonly nextState: WindowState;
  /** PEXPIRE of the hash after a commit: past it the state no longer matters. */
  readonly ttlMs: number;
}
