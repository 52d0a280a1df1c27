import type { ChainableCommander } from 'ioredis';
import { ALL_POLICIES } from '../fold/fold-events';
import { bucketStart, type Granularity } from '../fold/granularity';
import { ProjectionCorruptError } from './projection-corrupt.error';
import { parseKeyUsageValue, usageField, type ProjectionKeys } from '../sink/projection-keys';
import { ZERO_TOTALS, type Totals } from '../fold/totals';
import { parseUsageCounter, readUsageHash } from '../sink/usage-hash';

/** One bucket's read: queued on a pipeline, then its reply decoded. */
export interface BucketRead<T> {
  readonly queue: (pipeline: ChainableCommander) => void;
  readonly decode: (reply: unknown) => T;
}

/** Whose usage a query reads: a tenant's every policy, one policy, or one key of one policy. */
export interface UsageScope {
  readonly tenant: string;
  readonly policy?: string;
  /** Needs `policy`: per-key usage is kept per policy. */
  readonly key?: string;
}

/**
 * What a usage query reads per bucket, for both the rows of a page and the buckets of the range
 * total (`coverRange`), so paging and totals are one logic whatever the scope.
 */
export interface UsageSource {
  /** Totals per policy of one bucket of the page (the all-policies aggregate may be among them). */
  rows(granularity: Granularity, start: number): BucketRead<ReadonlyMap<string, Totals>>;
  /** One bucket of the range total. */
  total(granularity: Granularity, start: number): BucketRead<Totals>;
}

/**
 * - every policy: rows are HGETALL of the `usage:` hash, the total its `_all` pair (each decision once);
 * - one policy: HMGET of that policy's `cost:` / `count:` pair of the `usage:` hash, rows and total;
 * - one key: HMGET of the key's one packed field of the `keys:` hash of (tenant, policy), rows and total.
 * An absent hash or field reads as zero, exactly like a bucket without usage; a value the projector
 * never writes throws `ProjectionCorruptError`.
 */
export function usageSource(keys: ProjectionKeys, scope: UsageScope): UsageSource {
  const { tenant, policy, key } = scope;
  if (key !== undefined) {
    if (policy === undefined) throw new RangeError('usage of a key needs its policy');
    const read = (granularity: Granularity, start: number): BucketRead<Totals> => ({
      queue: (pipeline) => pipeline.hmget(keys.keyUsage(tenant, policy, granularity, start), key),
      decode: (reply) => {
        const [raw] = repliedFields(reply);
        if (raw === null || raw === undefined) return ZERO_TOTALS;
        const value = parseKeyUsageValue(raw);
        if (value !== null) return value;
        throw new ProjectionCorruptError({
          namespace: keys.namespace,
          tenant,
          policy,
          granularity,
          startMs: bucketStart(start, granularity),
          key,
        });
      },
    });
    return { rows: (g, s) => onePolicy(policy, read(g, s)), total: read };
  }
  const corrupt = (policy: string, granularity: Granularity, start: number) =>
    new ProjectionCorruptError({
      namespace: keys.namespace,
      tenant,
      policy,
      granularity,
      startMs: bucketStart(start, granularity),
    });
  const pair = (name: string, granularity: Granularity, start: number): BucketRead<Totals> => ({
    queue: (pipeline) =>
      pipeline.hmget(
        keys.usage(tenant, granularity, start),
        usageField('cost', name),
        usageField('count', name),
      ),
    decode: (reply) => {
      const totals = pairTotals(reply);
      if (totals === null) throw corrupt(name, granularity, start);
      return totals;
    },
  });
  if (policy !== undefined) {
    return { rows: (g, s) => onePolicy(policy, pair(policy, g, s)), total: (g, s) => pair(policy, g, s) };
  }
  return {
    rows: (granularity, start) => ({
      queue: (pipeline) => pipeline.hgetall(keys.usage(tenant, granularity, start)),
      decode: (reply) =>
        readUsageHash(reply as Record<string, string>, (name) => {
          throw corrupt(name, granularity, start);
        }),
    }),
    total: (g, s) => pair(ALL_POLICIES, g, s),
  };
}

function onePolicy(policy: string, read: BucketRead<Totals>): BucketRead<ReadonlyMap<string, Totals>> {
  return { queue: read.queue, decode: (reply) => new Map([[policy, read.decode(reply)]]) };
}

function repliedFields(reply: unknown): readonly (string | null)[] {
  return Array.isArray(reply) ? (reply as (string | null)[]) : [];
}

/** HMGET of a `cost:` / `count:` field pair (absent: 0); null when a value is not a counter. */
function pairTotals(reply: unknown): Totals | null {
  const [cost, count] = repliedFields(reply).map((raw) => (raw === null ? 0 : parseUsageCounter(raw)));
  return cost === null || count === null ? null : { cost: cost ?? 0, count: count ?? 0 };
}
