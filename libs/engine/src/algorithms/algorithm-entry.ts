import type { WindowMathSpec, WindowResult, WindowState } from '../window-math';

/**
 * One algorithm as the engine runs it: an entry of the registry (registry.ts). The policy-facing
 * facts (which duration field, the exactness bounds) are `ALGORITHM_RULES` in @tally/policy.
 */
export interface AlgorithmEntry {
  /**
   * Its letter in decide.lua: the first character of a window's `code` in ARGV, and the key of its
   * piece in the script's `ALG` table.
   */
  readonly letter: string;
  /**
   * Its Lua piece, `lua/algorithms/<file>`, put into decide.lua (and reseed.lua) when they are
   * loaded. Undefined: the frame carries it (concurrency's leases are a section of decide.lua).
   */
  readonly lua: string | undefined;
  /**
   * Its state in the policy key's state hash: one field, packed (`unpack` reads it back as the named
   * fields `WindowState` and the state view use). Undefined: a state of its own (concurrency's sorted
   * set of leases).
   */
  readonly state: StateCodec | undefined;
  /** Its own parameter, passed to its piece as the window's `param` (ARGV); absent: 0. */
  readonly param?: (spec: WindowMathSpec) => number;
  /** The TypeScript maths, the mirror of the Lua piece (see window-math.ts for the shared semantics). */
  readonly evaluate: (spec: WindowMathSpec, state: WindowState, nowMs: number, cost: number) => WindowResult;
  /** What `GET /v1/policies/{name}/state` shows of a stored state (`counters`). */
  readonly counters: (state: Readonly<Record<string, string>>, periodMs: number) => Record<string, number>;
  /**
   * `tally reseed` rebuilds it from the usage ledger; undefined: it does not, and why (what
   * `reconcile --enforcement` says when it skips the window).
   */
  readonly reseed: ReseedRule | { readonly skip: string };
  /** The SDK's local fallback limiter (libs/client `local-limiter.ts`, `evaluateLocalWindow`) runs it. */
  readonly clientLocal: boolean;
}

export interface StateCodec {
  /** The packed value as named fields; `{}` when absent or not this algorithm's shape. */
  readonly unpack: (value: string) => Record<string, string>;
  /** The named fields packed as decide.lua writes them. */
  readonly pack: (state: WindowState) => string;
}

/**
 * How `tally reseed` rebuilds a window from the ledger's allowed usage: `plan` says, for the window
 * now, from when events count (undefined: not rebuilt now, e.g. it refills within the hour anyway),
 * and makes one fold per key; reseed.lua raises the stored state to at least the fold's.
 */
export interface ReseedRule {
  readonly plan: (spec: WindowMathSpec, nowMs: number) => ReseedPlan | undefined;
  /** A state without buckets: why `reconcile --enforcement` has no projection bucket to compare. */
  readonly unbucketed?: string;
}

export interface ReseedPlan {
  /** The earliest event time that still counts now (epoch ms). */
  readonly sinceMs: number;
  /** A bucketed window's current bucket (what `reconcile --enforcement` compares); absent otherwise. */
  readonly bucket?: number;
  /** The previous bucket counts too (sliding windows). */
  readonly previous: boolean;
  /** A fresh fold of one key's allowed usage (events in any order). */
  readonly fold: () => ReseedFold;
}

export interface ReseedFold {
  add(timeMs: number, cost: number): void;
  /** reseed.lua's arguments: counters `bucket`, `count`, `previous`; gcra the TAT as `bucket` + `count` / limit. */
  result(): {
    readonly bucket: number;
    readonly count: number;
    readonly previous: number;
    readonly ttlMs: number;
  };
}

/** Stored fields as numbers (absent ones left out). */
export function numbers(fields: Readonly<Record<string, string>>): Record<string, number> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Number(v)]));
}
