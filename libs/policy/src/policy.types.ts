/**
 * The compiled, validated form of a policy (DESIGN §2). The YAML file is parsed into DTO classes,
 * validated with class-validator, then compiled into these plain readonly objects that the matcher
 * and the engine use. Periods are milliseconds here; the YAML speaks `1s`, `1m`, `1h`, `1d`, `1mo`.
 */

/**
 * The selector dimensions a request can carry. A policy's `key` names selector dims or attributes
 * (an attribute-keyed policy counts per attribute value: what an Envoy descriptor key without a
 * value does, docs/envoy.md "Matching").
 */
export const SELECTOR_DIMS = ['tenant', 'principal', 'token', 'client', 'route'] as const;
export type SelectorDim = (typeof SELECTOR_DIMS)[number];

export const ALGORITHMS = [
  'fixed_window',
  'sliding_window',
  'token_bucket',
  'calendar_month',
  'concurrency',
  'gcra',
] as const;
/**
 * - `fixed_window`: a counter per aligned period; resets at the period boundary.
 * - `sliding_window`: two fixed buckets; the previous one weighted by how much of it still overlaps.
 * - `token_bucket`: capacity = limit, refill = limit/period, continuous.
 * - `calendar_month`: a fixed window aligned to UTC calendar months (period is ignored).
 * - `concurrency`: at most `limit` units in flight; a passing decision holds them under a lease until
 *   it is released or its `lease_ttl` (kept in `periodMs`) ends.
 * - `gcra`: the generic cell rate algorithm: one unit every period/limit, up to `burst` at once.
 */
export type Algorithm = (typeof ALGORITHMS)[number];

export const WINDOW_ROLES = ['burst', 'sustained'] as const;
/** Which deny reason a window produces: `burst_quota_exhausted` or `sustained_quota_exhausted`. */
export type WindowRole = (typeof WINDOW_ROLES)[number];

/**
 * What a decision does when Redis cannot answer: `fail_open` allows it uncounted, `fail_closed` refuses
 * it (503), `local_fallback` keeps enforcing from this process's own counters, at a share of the limit.
 */
export const FAIL_MODES = ['fail_open', 'fail_closed', 'local_fallback'] as const;
export type FailMode = (typeof FAIL_MODES)[number];
/** Under `local_fallback`, what a key gets when the in-memory key bound is reached. */
export const OVERFLOW_MODES = ['fail_open', 'fail_closed'] as const;
export type OverflowMode = (typeof OVERFLOW_MODES)[number];
/** `shadow` policies count but never deny; they report `would_deny`. */
export const POLICY_MODES = ['enforce', 'shadow'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];

export interface WindowSpec {
  /** Unique within its policy; part of the Redis key. */
  readonly name: string;
  readonly role: WindowRole;
  readonly algorithm: Algorithm;
  /** Units allowed per period (token bucket: capacity). Positive integer. */
  readonly limit: number;
  /**
   * Period in milliseconds, 1ms..31d. For `calendar_month` the nominal 31d; the engine aligns to months.
   * For `concurrency` the lease TTL (`lease_ttl`): how long a lease holds its units at most.
   */
  readonly periodMs: number;
  /** `gcra` only: how many units may pass at once (the burst tolerance is (burst − 1) × period/limit). */
  readonly burst?: number;
}

/** Attribute/selector name → accepted values (any of them matches). */
export type MatchSpec = Readonly<Record<string, readonly string[]>>;

export interface Policy {
  /** Unique name; `[a-z0-9][a-z0-9_.-]{0,63}`; part of keys, metrics and events. */
  readonly name: string;
  /** Every entry must match (AND over names, OR over values). Empty = matches everything. */
  readonly match: MatchSpec;
  /** If every entry of `unless` matches, the policy does not apply (exemption). Empty = no exemption. */
  readonly unless: MatchSpec;
  /**
   * `match_prefix`: name → accepted value prefixes (Envoy's wildcard values `prefix*`). A name here
   * holds when its value is among `match`'s values for it or starts with one of these. Absent = none.
   */
  readonly matchPrefix?: MatchSpec;
  /** `unless_prefix`: the same for `unless` (a name holds by exact value or by prefix). */
  readonly unlessPrefix?: MatchSpec;
  /**
   * Composite key dimensions in order: selector dims or attribute names (a selector dim is looked up
   * among the selectors, any other name among the attributes). A missing one fails closed with
   * `selector_identity_missing`.
   */
  readonly key: readonly string[];
  readonly windows: readonly WindowSpec[];
  /** Largest valid cost; defaults to the smallest window limit (a larger cost could never pass). */
  readonly maxCost: number;
  readonly onBackendFailure: FailMode;
  /**
   * `local_fallback` only: a key that finds the in-memory key bound full (and no expired key to evict)
   * is allowed uncounted (`fail_open`) or refused with 503 (`fail_closed`, the default when absent).
   */
  readonly localFallbackOverflow?: OverflowMode;
  readonly mode: PolicyMode;
  readonly enabled: boolean;
  /** Within a group the first enabled matching policy (file order) claims the request. */
  readonly group?: string;
}

export interface PolicySet {
  /** Content hash of the source file: stamped on every event so the ledger says which rules decided. */
  readonly version: string;
  readonly policies: readonly Policy[];
  /** When this set was loaded (epoch ms). */
  readonly loadedAt: number;
}

/** One validation problem of a policy file, with the path where it is (`policies[2].windows[0].period`). */
export interface PolicyError {
  readonly path: string;
  readonly message: string;
}
