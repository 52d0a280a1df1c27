import {
  diffProjections,
  ProjectionKeys,
  parseUsageKey,
  readUsageHash,
  usageCellId,
  type Granularity,
  type ProjectionDifference,
  type Totals,
  nextBucketStart,
} from '@tally/projections';
import { META_COVERED_FROM, META_COVERED_TO, namespaceExists } from './namespaces';
import { OpsError } from './ops.error';
import type { RedisClient } from '@tally/redis';
import { scanKeys } from './redis-client';

export interface ReconcileOptions {
  readonly a: string;
  readonly b: string;
  /** Compare only buckets lying entirely in [fromMs, toMs). Default: what both namespaces cover. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Only this granularity. */
  readonly granularity?: Granularity;
}

export interface ReconcileResult {
  readonly a: string;
  readonly b: string;
  /** The range compared, ISO 8601; null = unbounded. */
  readonly from: string | null;
  readonly to: string | null;
  readonly cells: number;
  readonly differences: readonly ProjectionDifference[];
}

/**
 * `tally reconcile <nsA> <nsB>`: every usage cell (tenant × policy × granularity × bucket) whose
 * cost or count differs. A replayed namespace records the range it covers; by default only buckets
 * inside what both sides cover are compared, so "replay the last hour, compare with live" reports
 * the differences that matter, not the history live has and the replay does not.
 */
export async function reconcileNamespaces(
  redis: RedisClient,
  options: ReconcileOptions,
): Promise<ReconcileResult> {
  for (const ns of [options.a, options.b]) {
    if (!(await namespaceExists(redis, ns))) throw new OpsError(`no namespace ${ns}`, true);
  }
  const [coverA, coverB] = await Promise.all([coverage(redis, options.a), coverage(redis, options.b)]);
  const fromMs = options.fromMs ?? maxDefined(coverA.from, coverB.from);
  const toMs = options.toMs ?? minDefined(coverA.to, coverB.to);
  const inRange = (granularity: Granularity, start: number): boolean =>
    (options.granularity === undefined || options.granularity === granularity) &&
    (fromMs === undefined || start >= fromMs) &&
    (toMs === undefined || nextBucketStart(start, granularity) <= toMs);
  const [cellsA, cellsB] = await Promise.all([
    usageCells(redis, options.a, inRange),
    usageCells(redis, options.b, inRange),
  ]);
  const differences = diffProjections(cellsA, cellsB);
  return {
    a: options.a,
    b: options.b,
    from: fromMs === undefined ? null : new Date(fromMs).toISOString(),
    to: toMs === undefined ? null : new Date(toMs).toISOString(),
    cells: new Set([...cellsA.keys(), ...cellsB.keys()]).size,
    differences,
  };
}

async function usageCells(
  redis: RedisClient,
  namespace: string,
  inRange: (granularity: Granularity, start: number) => boolean,
): Promise<Map<string, Totals>> {
  const cells = new Map<string, Totals>();
  const keys = (await scanKeys(redis, new ProjectionKeys(namespace).allUsage()))
    .map((key) => ({ key, parts: parseUsageKey(key) }))
    .filter((k) => k.parts !== null && inRange(k.parts.granularity, k.parts.start));
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    const pipeline = redis.pipeline();
    for (const { key } of chunk) pipeline.hgetall(key);
    const replies = (await pipeline.exec()) ?? [];
    chunk.forEach(({ parts }, j) => {
      const [error, fields] = replies[j] ?? [null, {}];
      if (error !== null || parts === null) return;
      for (const [policy, totals] of readUsageHash(fields as Record<string, string>)) {
        const id = usageCellId({
          tenant: parts.tenant,
          policy,
          granularity: parts.granularity,
          start: parts.start,
        });
        cells.set(id, totals);
      }
    });
  }
  return cells;
}

async function coverage(redis: RedisClient, namespace: string): Promise<{ from?: number; to?: number }> {
  const [from, to] = await redis.hmget(
    new ProjectionKeys(namespace).meta(),
    META_COVERED_FROM,
    META_COVERED_TO,
  );
  return {
    ...(from === null ? {} : { from: Number(from) }),
    ...(to === null ? {} : { to: Number(to) }),
  };
}

function maxDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.max(...defined);
}

function minDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}
