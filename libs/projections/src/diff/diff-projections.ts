import { GRANULARITIES, isGranularity, type Granularity } from '../fold/granularity';
import { ZERO_TOTALS, type Totals } from '../fold/totals';

/** One usage cell: a policy's bucket for a tenant (and optionally one policy key). */
export interface UsageCell {
  readonly tenant: string | null;
  readonly policy: string;
  readonly granularity: Granularity;
  /** Bucket start, epoch ms UTC. */
  readonly start: number;
  /** Absent for the per-policy totals; a policy key for per-key cells. */
  readonly key?: string;
}

/** A cell whose totals differ between the two sides (a missing cell counts as zero). */
export interface ProjectionDifference {
  readonly cell: UsageCell;
  readonly a: Totals;
  readonly b: Totals;
}

/** Canonical map key of a cell; JSON because tenants and keys are free text. */
export function usageCellId(cell: UsageCell): string {
  const parts: unknown[] = [cell.tenant, cell.policy, cell.granularity, cell.start];
  if (cell.key !== undefined) parts.push(cell.key);
  return JSON.stringify(parts);
}

export function parseUsageCellId(id: string): UsageCell | null {
  let value: unknown;
  try {
    value = JSON.parse(id);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || (value.length !== 4 && value.length !== 5)) return null;
  const [tenant, policy, granularity, start, key] = value as unknown[];
  if ((tenant !== null && typeof tenant !== 'string') || typeof policy !== 'string') return null;
  if (!isGranularity(granularity) || typeof start !== 'number') return null;
  if (value.length === 5 && typeof key !== 'string') return null;
  return { tenant, policy, granularity, start, ...(typeof key === 'string' ? { key } : {}) };
}

/**
 * The cells where two projections disagree (`tally reconcile`): both maps are keyed by
 * `usageCellId`. Sorted by tenant, policy, granularity (minute … month), bucket, key, so the report
 * is stable and reads naturally. Empty after a full replay of the same range.
 * @throws TypeError when a map key is not a `usageCellId` (a caller bug, not a difference).
 */
export function diffProjections(
  a: ReadonlyMap<string, Totals>,
  b: ReadonlyMap<string, Totals>,
): ProjectionDifference[] {
  const differences: ProjectionDifference[] = [];
  for (const id of new Set([...a.keys(), ...b.keys()])) {
    const left = a.get(id) ?? ZERO_TOTALS;
    const right = b.get(id) ?? ZERO_TOTALS;
    if (left.cost === right.cost && left.count === right.count) continue;
    const cell = parseUsageCellId(id);
    if (cell === null) throw new TypeError(`not a usage cell id: ${id}`);
    differences.push({
      cell,
      a: { cost: left.cost, count: left.count },
      b: { cost: right.cost, count: right.count },
    });
  }
  return differences.sort((x, y) => compareCells(x.cell, y.cell));
}

function compareCells(x: UsageCell, y: UsageCell): number {
  return (
    compareText(x.tenant ?? '', y.tenant ?? '') ||
    compareText(x.policy, y.policy) ||
    GRANULARITIES.indexOf(x.granularity) - GRANULARITIES.indexOf(y.granularity) ||
    x.start - y.start ||
    compareText(x.key ?? '', y.key ?? '')
  );
}

function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
