import {
  diffProjections,
  NamespaceReader,
  ProjectionNamespaces,
  type Granularity,
  type ProjectionDifference,
  nextBucketStart,
} from '@tally/projections';
import { OpsError } from './ops.error';
import type { RedisClient } from '@tally/redis';

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
  const namespaces = new ProjectionNamespaces(redis);
  for (const ns of [options.a, options.b]) {
    if (!(await namespaces.exists(ns))) throw new OpsError(`no namespace ${ns}`, true);
  }
  const [coverA, coverB] = await Promise.all([
    namespaces.coverage(options.a),
    namespaces.coverage(options.b),
  ]);
  const fromMs = options.fromMs ?? maxDefined(coverA.from, coverB.from);
  const toMs = options.toMs ?? minDefined(coverA.to, coverB.to);
  const inRange = (granularity: Granularity, start: number): boolean =>
    (options.granularity === undefined || options.granularity === granularity) &&
    (fromMs === undefined || start >= fromMs) &&
    (toMs === undefined || nextBucketStart(start, granularity) <= toMs);
  const reader = new NamespaceReader(redis);
  const [cellsA, cellsB] = await Promise.all([
    reader.usageCells(options.a, inRange),
    reader.usageCells(options.b, inRange),
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

function maxDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.max(...defined);
}

function minDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}
