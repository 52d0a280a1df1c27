import { MAX_AGGREGATE } from './exact-counter';
import type { Granularity } from './granularity';
import type { CellRoom } from './projection-delta';

/**
 * The dead-letter reasons of events a projection step refuses (`tally-dlq-reason`). Each starts with
 * its kind — `overflow:`, `corrupt:`, `wrongtype:` — so an operator can sort them without parsing
 * the rest, which names the cell (or key) and the numbers involved.
 */

/** A usage cell in words: whose usage, which bucket. */
export interface CellName {
  readonly tenant: string | null;
  readonly policy: string;
  /** A policy key (`keys:` hashes); absent for a policy's total (`usage:` hashes). */
  readonly key?: string;
  readonly granularity: Granularity;
  readonly start: number;
}

export function describeCell(cell: CellName): string {
  const key = cell.key === undefined ? '' : ` key ${JSON.stringify(cell.key)}`;
  const tenant = cell.tenant === null ? 'no tenant' : `tenant ${JSON.stringify(cell.tenant)}`;
  const start = new Date(cell.start).toISOString().replace('.000Z', 'Z');
  return `usage of policy ${cell.policy}${key} (${tenant}) in the ${cell.granularity} bucket of ${start}`;
}

/**
 * A sum that would pass `MAX_AGGREGATE`: which one (cost, else count), what is stored, what the
 * step's earlier events add, what this event adds.
 */
export function overflowReason(
  cell: CellName,
  metric: 'cost' | 'count',
  stored: number,
  earlier: number,
  adds: number,
): string {
  return (
    `overflow: the ${describeCell(cell)} would exceed ${MAX_AGGREGATE} ` +
    `(${metric} stored ${stored}, earlier in the step ${earlier}, this event ${adds})`
  );
}

/** A stored value that is not a counter of at most `MAX_AGGREGATE` (edited by hand, or an old layout). */
export function corruptReason(key: string, field: string, stored: string): string {
  const shown = stored.length > 40 ? `${stored.slice(0, 40)}…` : stored;
  return `corrupt: ${key} field ${JSON.stringify(field)} holds ${JSON.stringify(shown)}, not a counter of at most ${MAX_AGGREGATE}; replay the namespace`;
}

/** A key of the wrong Redis type: no command of the step can read or write it. */
export function wrongTypeReason(key: string, expected: string): string {
  return `wrongtype: ${key} is not a ${expected}`;
}

/** Why `cell` cannot take `cost` more on top of what is stored (`room`) and the step's `used`. */
export function roomFor(
  cell: CellName,
  room: CellRoom | undefined,
  used: { readonly cost: number; readonly count: number } | undefined,
  cost: number,
): string | undefined {
  if (room?.kind === 'refused') return room.reason;
  const stored = room ?? { cost: 0, count: 0 };
  const earlier = used ?? { cost: 0, count: 0 };
  // Both partial sums are ≤ MAX_AGGREGATE, so exact; a total past it rounds to ≥ 2^53, never below.
  if (stored.cost + earlier.cost + cost > MAX_AGGREGATE)
    return overflowReason(cell, 'cost', stored.cost, earlier.cost, cost);
  if (stored.count + earlier.count + 1 > MAX_AGGREGATE)
    return overflowReason(cell, 'count', stored.count, earlier.count, 1);
  return undefined;
}
