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
  /** The SDK's local fallback limiter (libs/client, `evaluateLocalWindow`) runs it. */
  readonly clientLocal: boolean;
}

export interface StateCodec {
  /** The packed value as named fields; `{}` when absent or not this algorithm's shape. */
  readonly unpack: (value: string) => Record<string, string>;
  /** The named fields packed as decide.lua writes them. */
  readonly pack: (state: WindowState) => string;
}

/**
 * A window `tally reseed` rebuilds as a sum of the ledger's allowed usage per bucket (reseed.lua
 * raises the stored counts to at least those sums).
 */
export interface ReseedRule {
  /** The current bucket, and the state's TTL as a commit now sets it; undefined: not rebuilt now. */
  readonly plan: (spec: WindowMathSpec, nowMs: number) => ReseedBucket | undefined;
  /** The bucket an event at `timeMs` counted in. */
  readonly bucketOf: (spec: WindowMathSpec, timeMs: number) => number;
  /** The previous bucket counts too (sliding windows): events from its start are read. */
  readonly previous: boolean;
}

export interface ReseedBucket {
  readonly bucket: number;
  /** Where the current bucket starts (epoch ms). */
  readonly startMs: number;
  /** Where the previous one starts (for `previous`). */
  readonly previousStartMs: number;
  readonly ttlMs: number;
}

/** Stored fields as numbers (absent ones left out). */
export function numbers(fields: Readonly<Record<string, string>>): Record<string, number> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Number(v)]));
}
