/**
 * A runtime override of one policy's window limits for one key (docs/semantics.md, "Overrides"). The
 * wire shape (`OverrideItem` in @tally/api-contract) is this with `expires_at`/`updated_at` as RFC 3339.
 */
export interface Override {
  readonly policy: string;
  /** The policy's key value, as `keyOf` builds it (dims joined by ':', values percent-encoded). */
  readonly key: string;
  /** The tenant whose counters it changes; null: requests without a tenant (policies without `tenant` in their key need one). */
  readonly tenant: string | null;
  /** Window name → limit (integer ≥ 0; 0 blocks the key). Windows not named keep the policy's limit. */
  readonly limits: Readonly<Record<string, number>>;
  /** Epoch ms after which it is ignored and cleaned up; null: until removed. */
  readonly expiresAtMs: number | null;
  /** Why, in the operator's words. */
  readonly reason: string;
  /** The NAME of the token that set it (never the token); `admin` for the environment's admin token. */
  readonly setBy: string;
  /** Shard-wide sequence number of the change that wrote it: increases with every change of the shard's overrides. */
  readonly version: number;
  /** Redis time of that change, epoch ms. */
  readonly updatedAtMs: number;
}

/** What a caller asks to store (validated). */
export interface OverrideTarget {
  readonly policy: string;
  readonly key: string;
  readonly tenant: string | null;
}

export interface OverrideChange {
  readonly limits: Readonly<Record<string, number>>;
  readonly expiresAtMs: number | null;
  readonly reason: string;
  readonly setBy: string;
}
