import { OVERRIDE_EVENT_TYPE, USAGE_EVENT_TYPE, type LedgerEvent } from '@tally/events';
import { parseExactCounter } from '../fold/exact-counter';
import { bucketStart, isGranularity, type Granularity } from '../fold/granularity';

/**
 * The Redis key layout of projections (layout 2, sharded): a contract built only inside this lib, by
 * the step store (writes), the queries, `ProjectionNamespaces` (registry, pointer, offsets, replay
 * metadata) and `NamespaceReader` (reconcile's scans); the CLI calls those, never this file. Layout,
 * `<s>` = shard, `<t>` = encoded tenant, `<b>` = bucket start in ISO 8601 basic form (`20261130T0900Z`):
 *
 *   tally:proj:active                                    string  the namespace queries read
 *   tally:proj:namespaces                                set     every namespace created (projections list)
 *   tally:proj:{<ns>}:meta                               hash    the namespace: created, shards, replay, covered_*
 *   tally:proj:{<ns>:s<s>}:meta                          hash    one shard's steps: created, updated, events
 *   tally:proj:{<ns>:s<s>}:offsets                       hash    `<topic>:<partition>` → next offset to consume
 *   tally:proj:{<ns>:s<s>}:versions                      hash    policy-set version → first seen (epoch ms)
 *   tally:proj:{<ns>:s<s>}:ids:<hour b>                  set     dedup tokens `u:<id>` / `d:<id>` of that event hour
 *   tally:proj:{<ns>:s<s>}:usage:<t>:<gran>:<b>          hash    `cost:<policy>` / `count:<policy>`, all keys summed
 *   tally:proj:{<ns>:s<s>}:keys:<t>:<policy>:<gran>:<b>  hash    `<key>` → `<cost>:<count>` per policy key
 *   tally:proj:{<ns>:s<s>}:audit:<t>                     zset    score = time ms, member = `auditMember(entry)`
 *
 * Why this shape:
 * - A namespace is divided into `shards` shards (fixed when it is created, in its meta; see
 *   `shardOfPartition`): partition `p` of every topic is written to shard `p mod shards`. Each shard
 *   has its own hash tag `{<ns>:s<s>}`: the projector applies a batch and stores its partitions'
 *   offsets in ONE atomic step, which on Redis Cluster needs every key the step touches in one slot,
 *   and a step only ever touches one shard. Different shards hash to different slots, so the steps of
 *   different partitions spread over the nodes of a cluster (and run side by side on one server).
 *   Queries read every shard of a namespace and sum (`ProjectionQueries`). `active`, `namespaces`
 *   and the namespace meta are written outside the steps.
 * - One usage hash per (tenant, granularity, bucket) holds every policy: a page of a range query is
 *   one HGETALL (all policies) or HMGET (one policy) per bucket start and shard, pipelined; the range
 *   `total` is read from the few hundred buckets of `coverRange`, never from every minute of the range.
 * - A `keys:` field holds cost and count in one value (`parseKeyUsageValue`): these hashes take most of
 *   the cells a step writes (a policy key is rarely met twice in a step), and one field per key
 *   instead of two halves both what a step writes and the hashes Redis scans to write it.
 * - Top keys are read from the `keys:` hash of a bucket (`GET /v1/top-keys`), not kept in a sorted set
 *   beside it: a sorted set cost every usage event a member update (a sixth of a step's Redis time)
 *   and its own copy of every key, for a query analysts run now and then. Reading a bucket is
 *   O(keys in it), scanned in slices so a huge bucket never holds Redis for long.
 * - Dedup ids are partitioned by the event's UTC hour: a re-published event has the same id AND the
 *   same time, so it always meets its twin in the same set, and old sets can expire whole. An event
 *   whose id time (a ULID's: when the API minted the decision) is in another hour is marked in that
 *   hour's set too (`ProjectionDelta.idDedup`): the two copies of a decision whose step timed out but
 *   committed (`allowed` at Redis time, `degraded` at the API's clock) share the id, not the time.
 *   Both copies also meet in the same shard (same Kafka key, same partition): see `shardOfPartition`.
 * - Tenants (free text) are percent-encoded so keys split on ':' unambiguously; `~` is "no tenant"
 *   (and the global audit trail of policy reloads). Fields are not encoded: their prefix is fixed.
 * - Layout 1 (before shards) kept every key under `tally:proj:{<ns>}:`; a namespace written by it is
 *   rebuilt by a replay into a new namespace (docs/operations.md), its keys are dropped with it.
 */
export const ACTIVE_NAMESPACE_KEY = 'tally:proj:active';
export const NAMESPACES_KEY = 'tally:proj:namespaces';

/** Stands for "no tenant" in keys; never produced by `encodeKeyPart`, which escapes `~`. */
export const NO_TENANT_PART = '~';

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Namespace names are short and key-safe: `[a-z0-9][a-z0-9_-]{0,62}`. */
export function isValidNamespace(name: string): boolean {
  return NAMESPACE.test(name);
}

const KEY_SAFE = /^[A-Za-z0-9._-]*$/;

/** Percent-encodes every UTF-8 byte outside `[A-Za-z0-9._-]`, so the result has no ':', glob or `~`. */
export function encodeKeyPart(value: string): string {
  // Most tenants, policies and keys need no escaping; testing is cheaper than encoding.
  if (KEY_SAFE.test(value)) return value;
  return encodeURIComponent(value).replace(
    /[!'()*~]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function decodeKeyPart(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** `20261130T0900Z`: ISO 8601 basic format to the minute (no ':' to clash with the key separator). */
export function bucketToken(ms: number): string {
  // A batch names the same few bucket starts thousands of times: remember the recent ones.
  let token = recentTokens.get(ms);
  if (token === undefined) {
    const iso = new Date(ms).toISOString(); // 2026-11-30T09:00:00.000Z
    token = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}Z`;
    if (recentTokens.size >= RECENT_TOKENS) recentTokens.clear();
    recentTokens.set(ms, token);
  }
  return token;
}

/** Bounded: a replay over months of minutes must not grow it without end. */
const RECENT_TOKENS = 4096;
const recentTokens = new Map<number, string>();

export function parseBucketToken(token: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})Z$/.exec(token);
  if (m === null) return null;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:00Z`);
  return Number.isNaN(ms) || bucketToken(ms) !== token ? null : ms;
}

export type UsageMetric = 'cost' | 'count';

/** Field of a `usage:` hash: `cost:<policy>` / `count:<policy>`. */
export function usageField(metric: UsageMetric, name: string): string {
  return `${metric}:${name}`;
}

/**
 * Value of a `keys:` hash field (the field is the policy key itself): `<cost>:<count>`, two decimal
 * counters of at most 2^53 − 1 each (`parseExactCounter`); null for anything else.
 */
export function parseKeyUsageValue(value: string): { cost: number; count: number } | null {
  const colon = value.indexOf(':');
  if (colon < 0) return null;
  const cost = parseExactCounter(value.slice(0, colon));
  const count = parseExactCounter(value.slice(colon + 1));
  return cost === null || count === null ? null : { cost, count };
}

export function parseUsageField(field: string): { metric: UsageMetric; name: string } | null {
  const colon = field.indexOf(':');
  const metric = field.slice(0, colon);
  return metric === 'cost' || metric === 'count' ? { metric, name: field.slice(colon + 1) } : null;
}

/** Field of the offsets hash. Topic names never contain ':', so the last ':' splits. */
export function offsetField(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}

export function parseOffsetField(field: string): { topic: string; partition: number } | null {
  const colon = field.lastIndexOf(':');
  const partition = Number(field.slice(colon + 1));
  return colon > 0 && Number.isSafeInteger(partition) && partition >= 0
    ? { topic: field.slice(0, colon), partition }
    : null;
}

/** A parsed `usage:` key, as found by SCAN (reconcile). */
export interface UsageKeyParts {
  readonly namespace: string;
  readonly shard: number;
  readonly tenant: string | null;
  readonly granularity: Granularity;
  readonly start: number;
}

export function parseUsageKey(key: string): UsageKeyParts | null {
  const m = /^tally:proj:\{([a-z0-9][a-z0-9_-]*):s(0|[1-9]\d{0,5})\}:usage:([^:]+):([a-z]+):([0-9TZ]+)$/.exec(
    key,
  );
  if (m === null) return null;
  const [, namespace = '', shard = '', tenantPart = '', granularity, token = ''] = m;
  const tenant = tenantPart === NO_TENANT_PART ? null : decodeKeyPart(tenantPart);
  const start = parseBucketToken(token);
  if (tenant === '' || (tenant === null && tenantPart !== NO_TENANT_PART) || start === null) return null;
  if (!isGranularity(granularity)) return null;
  return { namespace, shard: Number(shard), tenant, granularity, start };
}

/** Shards a namespace may have: far more than any topic has partitions, small enough for a key. */
export const MAX_SHARDS = 4096;

/**
 * The shard partition `partition` of any topic is written to. Why `mod shards`: a Kafka key goes to
 * partition `murmur2(key) mod P`, so its shard is `(murmur2(key) mod P) mod shards`, which equals
 * `murmur2(key) mod shards` whenever `shards` divides `P`. A namespace's `shards` is the number of
 * partitions its topics had when it was created, and topics only grow to multiples of it
 * (docs/operations.md), so an event's shard never changes: a re-published twin (the relay is at
 * least once) lands in the shard of the first copy, even across a partition growth, and the per-shard
 * dedup sets stay exact.
 */
export function shardOfPartition(partition: number, shards: number): number {
  return partition % shards;
}

/**
 * The shard count of a new namespace over topics of these partition counts: their greatest common
 * divisor, so it divides each (`shardOfPartition`). Topics of 12 partitions (the default) give 12.
 */
export function shardsForPartitions(partitionCounts: readonly number[]): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const shards = partitionCounts.reduce(gcd, 0);
  return Math.min(Math.max(shards, 1), MAX_SHARDS);
}

/** The namespace-wide keys (outside every shard). */
export class NamespaceKeys {
  private readonly root: string;

  constructor(readonly namespace: string) {
    if (!isValidNamespace(namespace)) throw new RangeError(`invalid projection namespace: ${namespace}`);
    this.root = `tally:proj:{${namespace}}`;
  }

  /** created, shards (layout 2), replay, covered_from, covered_to. */
  meta(): string {
    return `${this.root}:meta`;
  }

  /** The offsets hash of layout 1 (one slot): its presence marks a namespace written before shards. */
  legacyOffsets(): string {
    return `${this.root}:offsets`;
  }

  /** SCAN pattern of the namespace-wide keys, and every key of layout 1 (drop). */
  all(): string {
    return `${this.root}:*`;
  }

  /** SCAN pattern of every shard key of the namespace (drop). */
  allShards(): string {
    return `tally:proj:{${this.namespace}:s*`;
  }

  shard(shard: number): ProjectionKeys {
    return new ProjectionKeys(this.namespace, shard);
  }
}

/** Every key of one shard of one namespace. Buckets are given as any instant inside them. */
export class ProjectionKeys {
  private readonly root: string;

  constructor(
    readonly namespace: string,
    readonly shard: number,
  ) {
    if (!isValidNamespace(namespace)) throw new RangeError(`invalid projection namespace: ${namespace}`);
    if (!Number.isSafeInteger(shard) || shard < 0 || shard >= MAX_SHARDS)
      throw new RangeError(`invalid projection shard: ${shard}`);
    this.root = `tally:proj:{${namespace}:s${shard}}`;
  }

  /** SCAN pattern of every key of the shard. */
  all(): string {
    return `${this.root}:*`;
  }

  /** SCAN pattern of the usage totals hashes (reconcile). */
  allUsage(): string {
    return `${this.root}:usage:*`;
  }

  /** The shard's step bookkeeping: created, updated, events. */
  meta(): string {
    return `${this.root}:meta`;
  }

  offsets(): string {
    return `${this.root}:offsets`;
  }

  /** Policy-set versions already recorded (`FoldContext.knownPolicySetVersions`; HSETNX new ones). */
  versions(): string {
    return `${this.root}:versions`;
  }

  ids(eventTimeMs: number): string {
    return `${this.root}:ids:${bucketToken(bucketStart(eventTimeMs, 'hour'))}`;
  }

  usage(tenant: string | null, granularity: Granularity, ms: number): string {
    return `${this.root}:usage:${tenantPart(tenant)}:${granularity}:${bucketToken(bucketStart(ms, granularity))}`;
  }

  keyUsage(tenant: string | null, policy: string, granularity: Granularity, ms: number): string {
    const bucket = bucketToken(bucketStart(ms, granularity));
    return `${this.root}:keys:${tenantPart(tenant)}:${encodeKeyPart(policy)}:${granularity}:${bucket}`;
  }

  /** The audit trail of a tenant; `null` is the tenant-less trail that also holds policy reloads. */
  audit(tenant: string | null): string {
    return `${this.root}:audit:${tenantPart(tenant)}`;
  }
}

function tenantPart(tenant: string | null): string {
  return tenant === null ? NO_TENANT_PART : encodeKeyPart(tenant);
}

/**
 * Member of the dedup sets. In history of the first contract a decision has a usage AND a decision
 * event with the same id, so the token carries the kind: `u:` usage, `d:` a denial (`tally.decision.v2`
 * and `tally.decision.v1` share it: a denial re-drained by a relay of either contract is one denial),
 * `o:` an override change.
 */
export function dedupTokenOf(event: LedgerEvent): string {
  return `${event.type === USAGE_EVENT_TYPE ? 'u' : event.type === OVERRIDE_EVENT_TYPE ? 'o' : 'd'}:${event.id}`;
}
