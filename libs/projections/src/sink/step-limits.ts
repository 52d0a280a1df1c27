import type { StepProblem } from './apply-batch.script';
import type { StepTarget } from './batch-step';
import { parseExactCounter } from '../fold/exact-counter';
import type { Granularity } from '../fold/granularity';
import type { CellRoom, FoldLimits } from '../fold/projection-delta';
import { parseUsageField } from './projection-keys';
import { corruptReason, wrongTypeReason } from '../fold/refusal-reasons';

const HOUR_MS = 3_600_000;

/**
 * What a namespace can still take, learnt from the problems of refused steps (apply-batch.lua's
 * reply 2), in the fold's terms: the fold then takes a step's events one at a time and refuses
 * exactly those that do not fit. Limits only accumulate while a step is retried: counters only
 * grow, and a value found corrupt stays so until someone repairs it.
 */
export class StepLimits implements FoldLimits {
  private readonly tenants = new Set<string | null>();
  private readonly cells = new Map<string, CellRoom>();
  private readonly wholeKeys = new Map<string, string>();
  private readonly audits = new Map<string | null, string>();
  private readonly hours = new Map<number, string>();

  /** Whether any problem was learnt (a fold with empty limits is an ordinary fold). */
  get size(): number {
    return this.cells.size + this.wholeKeys.size + this.audits.size + this.hours.size;
  }

  /**
   * Adds the problems of one refused step; `keys` and `targets` are that step's (`BatchStepArgs`).
   * @throws Error for a problem no event can be blamed for (a key the step does not know as a cell).
   */
  learn(keys: readonly string[], targets: readonly StepTarget[], problems: readonly StepProblem[]): void {
    for (const { keyIndex, field, kind, stored } of problems) {
      const key = keys[keyIndex - 1] ?? '?';
      const target = targets[keyIndex - 1];
      const blame = (): Error =>
        new Error(`apply-batch.lua refused ${kind} at ${key} ${JSON.stringify(field)}: no event to blame`);
      if (target === undefined || target.kind === 'fixed') throw blame();
      if (target.kind === 'ids') {
        this.hours.set(Math.floor(target.timeMs / HOUR_MS), wrongTypeReason(key, 'set'));
        continue;
      }
      if (target.kind === 'audit') {
        this.tenants.add(target.tenant);
        this.audits.set(target.tenant, wrongTypeReason(key, 'sorted set'));
        continue;
      }
      this.tenants.add(target.tenant);
      const policy = target.kind === 'keys' ? target.policy : undefined;
      if (kind === 'wrongtype') {
        this.wholeKeys.set(
          hashId(target.tenant, policy, target.granularity, target.start),
          wrongTypeReason(key, 'hash'),
        );
        continue;
      }
      if (target.kind === 'keys') {
        const id = cellId(target.tenant, target.policy, field, target.granularity, target.start);
        this.cells.set(
          id,
          kind === 'corrupt' ? refused(corruptReason(key, field, stored)) : packedRoom(stored, key, field),
        );
        continue;
      }
      const parsed = parseUsageField(field);
      if (parsed === null) throw blame();
      const id = cellId(target.tenant, parsed.name, undefined, target.granularity, target.start);
      const known = this.cells.get(id);
      if (kind === 'corrupt') this.cells.set(id, refused(corruptReason(key, field, stored)));
      else if (known?.kind !== 'refused') {
        const value = stored === '' ? 0 : parseExactCounter(stored);
        if (value === null) this.cells.set(id, refused(corruptReason(key, field, stored)));
        else
          this.cells.set(id, {
            kind: 'stored',
            cost: parsed.metric === 'cost' ? value : (known?.cost ?? 0),
            count: parsed.metric === 'count' ? value : (known?.count ?? 0),
          });
      }
    }
  }

  touches(tenant: string | null): boolean {
    return this.tenants.has(tenant);
  }

  dedupRefusal(timeMs: number): string | undefined {
    return this.hours.get(Math.floor(timeMs / HOUR_MS));
  }

  auditRefusal(tenant: string | null): string | undefined {
    return this.audits.get(tenant);
  }

  totalRoom(
    tenant: string | null,
    policy: string,
    granularity: Granularity,
    start: number,
  ): CellRoom | undefined {
    const whole = this.wholeKeys.get(hashId(tenant, undefined, granularity, start));
    return whole === undefined
      ? this.cells.get(cellId(tenant, policy, undefined, granularity, start))
      : refused(whole);
  }

  keyRoom(
    tenant: string | null,
    policy: string,
    key: string,
    granularity: Granularity,
    start: number,
  ): CellRoom | undefined {
    const whole = this.wholeKeys.get(hashId(tenant, policy, granularity, start));
    return whole === undefined
      ? this.cells.get(cellId(tenant, policy, key, granularity, start))
      : refused(whole);
  }
}

function refused(reason: string): CellRoom {
  return { kind: 'refused', reason };
}

/** A `keys:` value that would overflow: what it holds (absent: 0:0), or refused if it does not read. */
function packedRoom(stored: string, key: string, field: string): CellRoom {
  if (stored === '') return { kind: 'stored', cost: 0, count: 0 };
  const colon = stored.indexOf(':');
  const cost = colon < 0 ? null : parseExactCounter(stored.slice(0, colon));
  const count = colon < 0 ? null : parseExactCounter(stored.slice(colon + 1));
  return cost === null || count === null
    ? refused(corruptReason(key, field, stored))
    : { kind: 'stored', cost, count };
}

/** Ids in JSON: tenants and keys are free text. */
function cellId(
  tenant: string | null,
  policy: string,
  key: string | undefined,
  granularity: Granularity,
  start: number,
): string {
  return JSON.stringify([tenant, policy, key ?? null, granularity, start]);
}

function hashId(
  tenant: string | null,
  policy: string | undefined,
  granularity: Granularity,
  start: number,
): string {
  return JSON.stringify([tenant, policy ?? null, granularity, start]);
}
