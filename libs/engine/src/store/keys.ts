/**
 * The Redis key layout of the hot path. This format is a contract: the relay reads the outbox and
 * denial keys, `tally reseed` rebuilds window keys, operators grep them. Change it only with a new
 * version prefix (`tally:v2`) and a migration; the unit tests pin the exact strings. (Idempotency
 * records, which only live for their TTL, changed layout within v1 without one: see `idempotencyKey`.)
 *
 * Every key of one decision carries the same hash tag `{s<N>}` so the one Lua script that decides is
 * legal on Redis Cluster (all its keys in one slot). The tag is also part of each counter's identity,
 * so it must be a function of that identity alone: N = fnv1a32(tenant) mod shards, or the shard of
 * `_` for requests without a tenant, and the tenant (the scope) is spelled inside each window key.
 * Counters are therefore always per tenant; see docs/adr/0001-one-script-per-decision.md.
 */

import { hash } from 'node:crypto';
import { denialHashKey, denialLeaseKey, outboxStreamKey } from '@tally/events';

export const KEY_PREFIX = 'tally:v1';
/** The scope (and shard basis) of requests that carry no `tenant` selector. */
export const NO_TENANT = '_';

/** FNV-1a, 32 bit, over the UTF-8 bytes: tiny, stable across languages, good spread for short ids. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * A tenant as it appears inside a key: `%`, `:`, `{`, `}` percent-encoded (as `keyOf` does for key
 * values) and a tenant literally named `_` encoded too, so it can never share the no-tenant scope.
 */
export function encodeScope(tenant: string | undefined): string {
  if (tenant === undefined) return NO_TENANT;
  if (tenant === NO_TENANT) return '%5F';
  return tenant.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Inverse of `encodeScope`: `_` is no tenant; `%25 %3A %7B %7D %5F` are the escaped characters. */
export function decodeScope(scope: string): string | null {
  if (scope === NO_TENANT) return null;
  return scope.replace(/%(25|3A|7B|7D|5F)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The shard of a decision: fnv1a32(tenant, else `_`) mod `shards`. */
export function shardOf(tenant: string | undefined, shards: number): number {
  return fnv1a32(tenant ?? NO_TENANT) % shards;
}

/** The keys of one shard; build once per decision with `shardKeys`, then derive window keys. */
export interface ShardKeys {
  readonly shard: number;
  /** `tally:v1:{s<N>}` */
  readonly base: string;
  /** Stream of allowed decisions, read by the relay: `tally:v1:{s<N>}:outbox` (layout: @tally/events' outbox contract). */
  readonly outbox: string;
  /** Hash of coalesced denials, `tally:v1:{s<N>}:denials` (fields: `denialField` of the outbox contract). */
  readonly denials: string;
  /** The relay's lease on the denial hash, `tally:v1:{s<N>}:denials:lease`. */
  readonly denialLease: string;
}

export function shardKeys(shard: number): ShardKeys {
  const base = `${KEY_PREFIX}:{s${shard}}`;
  return {
    shard,
    base,
    outbox: outboxStreamKey(base),
    denials: denialHashKey(base),
    denialLease: denialLeaseKey(base),
  };
}

/** Every shard's keys: the relay iterates these to find the outbox streams. */
export function allShardKeys(shards: number): ShardKeys[] {
  return Array.from({ length: shards }, (_, n) => shardKeys(n));
}

/**
 * One hash per window: `tally:v1:{s<N>}:w:<policy>:<window>:<scope>:<key>`. `key` is the policy's key
 * value as `keyOf` builds it (already encoded); `scope` is `encodeScope(tenant)`. Bucketed algorithms
 * keep the bucket index inside the hash, so no key name depends on time and the script declares all
 * of its keys up front.
 */
export function windowKey(
  shard: ShardKeys,
  scope: string,
  policy: string,
  window: string,
  key: string,
): string {
  return `${shard.base}:w:${policy}:${window}:${scope}:${key}`;
}

/**
 * One hash per policy key for its rate windows (every algorithm but `concurrency`, whose window keeps a
 * sorted set of its own under `windowKey`): `tally:v1:{s<N>}:pk:<policy>:<scope>:<key>`, one field
 * per window (its state packed: `policy-state-hash.ts`) and `_e`, the hash's expiry. decide.lua reads
 * and writes a policy's windows with one command each (docs/adr/0008-one-hash-per-policy-key.md).
 * The segment `pk` replaced the per-window `w` hashes of rate windows: a version that knows only `w`
 * never reads these, and this one never reads those (the upgrade starts rate windows afresh).
 */
export function policyStateKey(shard: ShardKeys, scope: string, policy: string, key: string): string {
  return `${shard.base}:pk:${policy}:${scope}:${key}`;
}

/** The tenant and policy key of one policy state hash (see `parsePolicyStateKey`). */
export interface WindowKeyParts {
  /** null: the no-tenant scope (`_`). */
  readonly tenant: string | null;
  /** The policy's key value, as `keyOf` built it (and as the projection records it). */
  readonly key: string;
}

const POLICY_STATE_KEY = new RegExp(`^${KEY_PREFIX}:\\{s\\d+\\}:pk:(.*)$`);

/**
 * Inverse of `policyStateKey` for a known policy (the caller scanned for it). The scope is
 * percent-encoded without ':' (`encodeScope`), so the first ':' after it ends it and the rest, which
 * may contain ':', is the key value.
 */
export function parsePolicyStateKey(redisKey: string, policy: string): WindowKeyParts | null {
  const m = POLICY_STATE_KEY.exec(redisKey);
  if (m === null || !m[1].startsWith(`${policy}:`)) return null;
  const rest = m[1].slice(policy.length + 1);
  const colon = rest.indexOf(':');
  if (colon < 0) return null;
  return { tenant: decodeScope(rest.slice(0, colon)), key: rest.slice(colon + 1) };
}

/**
 * `tally:v1:{s<N>}:idem.sha256:<scope>:<digest>`, digest = base64url(SHA-256(idempotency_key)), 43
 * characters: a caller's key never becomes (part of) a key name, whatever it holds, and every record
 * name has one length. The key itself is still echoed where the contract shows it (events).
 *
 * Upgrade: records of the older layout (`:idem:<scope>:<key verbatim>`) are no longer read; they
 * expire with their TTL (`TALLY_IDEMPOTENCY_TTL`), and a retry sent across the upgrade is decided
 * afresh rather than replayed. The segment has a new name so an old verbatim key can never be taken
 * for a digest.
 */
export function idempotencyKey(shard: ShardKeys, scope: string, idempotencyKey: string): string {
  return `${shard.base}:idem.sha256:${scope}:${hash('sha256', idempotencyKey, 'base64url')}`;
}

/**
 * A lease id names its shard and its decision: `s<N>-<decision id>`. The server finds the lease's
 * record (`leaseKey`, same slot as the windows it holds) from the id alone, with no lookup table, and
 * an idempotent replay of the decision names the same lease. Not a secret: a release is authorised by
 * the caller's token (role and tenant), as a decision is.
 */
export function leaseIdOf(shard: number, decisionId: string): string {
  return `s${shard}-${decisionId}`;
}

const LEASE_ID = /^s(\d{1,6})-([0-9A-HJKMNP-TV-Z]{26})$/;

/** Inverse of `leaseIdOf`; null when `id` is not a lease id (a 400, never a Redis read). */
export function parseLeaseId(id: string): { shard: number; decisionId: string } | null {
  const m = LEASE_ID.exec(id);
  return m === null ? null : { shard: Number(m[1]), decisionId: m[2] };
}

/**
 * The lease record, a string `tally:v1:{s<N>}:lease:<decision id>`: expiry (ms), units, when it was
 * released (or empty), the concurrency window keys it holds (tab-separated) and the release event's
 * payload, newline-separated (decide.lua writes it, release.lua reads it, extend.lua moves its expiry).
 * It outlives its expiry by one lease TTL, so a late release is told "expired", not 404.
 */
export function leaseKey(shard: ShardKeys, decisionId: string): string {
  return `${shard.base}:lease:${decisionId}`;
}

/**
 * The append marker of a degraded decision, a string `tally:v1:{s<N>}:degraded:<decision id>` beside
 * the shard's outbox (same slot): degraded-append.lua writes it with the outbox entry, in one script,
 * and appends nothing when it is already there. A retried append (its first reply lost) so never
 * appends twice while the marker lives (`DegradedLedgerOptions.markerTtlMs`).
 */
export function degradedMarkerKey(shard: ShardKeys, decisionId: string): string {
  return `${shard.base}:degraded:${decisionId}`;
}

/**
 * The shard's runtime overrides, one hash `tally:v1:{s<N>}:overrides` beside the windows (same slot,
 * so decide.lua reads it in the step that decides): field `overrideField(…)`, value the encoded
 * override (overrides/override-record.ts). Field `#seq` holds the shard's version counter.
 */
export function overridesKey(shard: ShardKeys): string {
  return `${shard.base}:overrides`;
}

/**
 * The listing index of the shard's overrides, a sorted set `tally:v1:{s<N>}:overrides:index` of
 * fields, all with score 0: `ZRANGEBYLEX` pages through it in field order, by policy (a field starts
 * with its policy) or policy and tenant. One per shard, so it works on Redis Cluster unchanged.
 */
export function overrideIndexKey(shard: ShardKeys): string {
  return `${shard.base}:overrides:index`;
}

/** `<policy>:<scope>:<key>`: neither the policy nor the scope holds ':', so the rest is the key. */
export function overrideField(policy: string, scope: string, key: string): string {
  return `${policy}:${scope}:${key}`;
}
