import { auditMember } from '../fold/audit-entry';
import { MAX_AGGREGATE, MAX_AGGREGATE_DIGITS } from '../fold/exact-counter';
import type { ProjectionDelta } from '../fold/projection-delta';
import type { Granularity } from '../fold/granularity';
import { offsetField, ProjectionKeys, usageField } from './projection-keys';

/** Where a partition resumes once a batch is applied: Kafka's "next offset to read" (last + 1). */
export interface OffsetMark {
  readonly topic: string;
  readonly partition: number;
  /** int64 decimal string. */
  readonly nextOffset: string;
}

export interface BatchStepOptions {
  /** Audit rows older than this (by Redis time) are trimmed from every audit set a step writes. */
  readonly auditRetentionMs: number;
  /** Lifetime of a dedup set after its last write: how late a re-published twin is still caught. */
  readonly dedupTtlMs: number;
}

/** KEYS and ARGV of `apply-batch.lua`, in the order of its legend. */
export interface BatchStepArgs {
  readonly keys: readonly string[];
  readonly argv: readonly (string | number)[];
  /** What each key holds, index for index with `keys`: how a refused step's problems map back to cells. */
  readonly targets: readonly StepTarget[];
}

/**
 * The cells behind a key of a step, in the fold's terms. `fixed` are the four shard-wide keys
 * (offsets, meta, versions, the tenant-less audit trail): no event can be blamed for them.
 */
export type StepTarget =
  | { readonly kind: 'fixed' }
  | { readonly kind: 'ids'; readonly timeMs: number }
  | {
      readonly kind: 'usage';
      readonly tenant: string | null;
      readonly granularity: Granularity;
      readonly start: number;
    }
  | {
      readonly kind: 'keys';
      readonly tenant: string | null;
      readonly policy: string;
      readonly granularity: Granularity;
      readonly start: number;
    }
  | { readonly kind: 'audit'; readonly tenant: string | null };

/**
 * Turns a folded batch into the arguments of the one atomic step (see the legend of
 * `lua/apply-batch.lua`). Pure: the same delta gives the same arguments, so it is tested with exact
 * strings. Every key is a key of one shard of `keys.namespace`, hence of one Cluster slot.
 *
 * A step names tens of thousands of cells but only hundreds of keys: each Redis key is built once
 * per step (`StepKeys` remembers it by its parts), not once per cell.
 */
export function batchStepArgs(
  keys: ProjectionKeys,
  delta: ProjectionDelta,
  offsets: readonly OffsetMark[],
  options: BatchStepOptions,
): BatchStepArgs {
  const refs = new StepKeys(keys);
  const argv: (string | number)[] = [
    options.auditRetentionMs,
    options.dedupTtlMs,
    delta.applied,
    MAX_AGGREGATE_DIGITS,
  ];

  const groups = new Map<number, string[]>();
  // An event's second mark (its id hour, `idDedup`) is one more token of another hour's group: the
  // script checks and writes it like the first, so a twin found in either set stops the step.
  for (const marks of [delta.dedup, delta.idDedup ?? []])
    for (const { token, timeMs } of marks) {
      const key = refs.ids(timeMs);
      const tokens = groups.get(key);
      if (tokens === undefined) groups.set(key, [token]);
      else tokens.push(token);
    }
  argv.push(groups.size);
  // Appends item by item: spreading a batch-sized array into push() overflows the call stack.
  for (const [key, tokens] of groups) {
    argv.push(key, tokens.length);
    for (const token of tokens) argv.push(token);
  }

  // Grouped by key: the script reads and writes each hash with one command per key (HMGET + HSET)
  // instead of one command per field, which is what a batch of
  // distinct usage cells (most keys of a tenant differ) spends its Redis time on otherwise.
  const perKey = new FieldGroups(2);
  for (const u of delta.usage)
    perKey.add(refs.keyUsage(u.tenant, u.policy, u.granularity, u.start), u.key, u.cost, u.count);
  perKey.appendTo(argv);

  const hashes = new FieldGroups(1);
  for (const t of delta.usageTotals) {
    const key = refs.usage(t.tenant, t.granularity, t.start);
    hashes.add(key, usageField('cost', t.policy), t.cost);
    hashes.add(key, usageField('count', t.policy), t.count);
  }
  hashes.appendTo(argv);

  const rows = delta.audit.filter((entry) => entry.type !== 'policy_reload');
  argv.push(rows.length);
  for (const row of rows) argv.push(refs.audit(row.tenant ?? null), row.timeMs, auditMember(row));

  const reloads = delta.audit.filter((entry) => entry.type === 'policy_reload');
  argv.push(reloads.length);
  for (const reload of reloads) argv.push(reload.policySetVersion, reload.timeMs, auditMember(reload));

  argv.push(offsets.length);
  for (const o of offsets) argv.push(offsetField(o.topic, o.partition), o.nextOffset);

  return { keys: refs.list, argv, targets: refs.targets };
}

/**
 * The KEYS of a step and the index of each, the four fixed ones first. Keys are looked up by their
 * parts in nested maps: the parts are strings the events already hold, so a lookup hashes nothing
 * new, where building the key string for every cell showed as a tenth of a replay's CPU.
 */
class StepKeys {
  readonly list: string[];
  readonly targets: StepTarget[];
  private readonly index: Map<string, number>;
  private readonly idsByHour = new Map<number, number>();
  private readonly usageByTenant = new Map<string | null, Map<Granularity, Map<number, number>>>();
  private readonly keysByTenant = new Map<
    string | null,
    Map<string, Map<Granularity, Map<number, number>>>
  >();

  constructor(private readonly keys: ProjectionKeys) {
    this.list = [keys.offsets(), keys.meta(), keys.versions(), keys.audit(null)];
    this.targets = this.list.map(() => FIXED);
    this.index = new Map(this.list.map((key, i) => [key, i + 1]));
  }

  audit(tenant: string | null): number {
    return this.ref(this.keys.audit(tenant), { kind: 'audit', tenant });
  }

  ids(timeMs: number): number {
    const hour = Math.floor(timeMs / HOUR_MS);
    let i = this.idsByHour.get(hour);
    if (i === undefined)
      this.idsByHour.set(hour, (i = this.ref(this.keys.ids(timeMs), { kind: 'ids', timeMs })));
    return i;
  }

  usage(tenant: string | null, granularity: Granularity, start: number): number {
    const byStart = inner(inner(this.usageByTenant, tenant), granularity);
    let i = byStart.get(start);
    if (i === undefined) {
      const key = this.keys.usage(tenant, granularity, start);
      byStart.set(start, (i = this.ref(key, { kind: 'usage', tenant, granularity, start })));
    }
    return i;
  }

  keyUsage(tenant: string | null, policy: string, granularity: Granularity, start: number): number {
    const byStart = inner(inner(inner(this.keysByTenant, tenant), policy), granularity);
    let i = byStart.get(start);
    if (i === undefined) {
      const key = this.keys.keyUsage(tenant, policy, granularity, start);
      byStart.set(start, (i = this.ref(key, { kind: 'keys', tenant, policy, granularity, start })));
    }
    return i;
  }

  private ref(key: string, target: StepTarget): number {
    let i = this.index.get(key);
    if (i === undefined) {
      this.list.push(key);
      this.targets.push(target);
      i = this.list.length;
      this.index.set(key, i);
    }
    return i;
  }
}

const FIXED: StepTarget = { kind: 'fixed' };

const HOUR_MS = 3_600_000;

function inner<K, V extends Map<unknown, unknown>>(outer: Map<K, V>, key: K): V {
  let map = outer.get(key);
  if (map === undefined) outer.set(key, (map = new Map() as V));
  return map;
}

/**
 * Values grouped by key index, in first-seen order (the arguments stay deterministic); a field met
 * twice for one key is summed here, so the script never sees a field twice in a group. `width`
 * values per field: 1 for an increment, 2 for the packed `cost:count` of a `keys:` hash field.
 */
class FieldGroups {
  private readonly groups = new Map<number, Map<string, number[]>>();

  constructor(private readonly width: 1 | 2) {}

  add(key: number, field: string, ...by: number[]): void {
    let fields = this.groups.get(key);
    if (fields === undefined) this.groups.set(key, (fields = new Map<string, number[]>()));
    const sums = fields.get(field);
    if (sums === undefined) fields.set(field, by);
    else
      for (let v = 0; v < this.width; v++) {
        sums[v] += by[v];
        // The fold keeps every cell within MAX_AGGREGATE; a sum past it here would be a bug, not data.
        if (sums[v] > MAX_AGGREGATE) throw new RangeError(`step cell ${field} passes ${MAX_AGGREGATE}`);
      }
  }

  /**
   * `n` groups of (key index, m, field * m, value * m [, second value * m]): the fields lie
   * contiguous, so the script hands them to HMGET / ZMSCORE straight from ARGV. Item by item: see
   * the dedup section.
   */
  appendTo(argv: (string | number)[]): void {
    argv.push(this.groups.size);
    for (const [key, fields] of this.groups) {
      argv.push(key, fields.size);
      for (const field of fields.keys()) argv.push(field);
      for (let v = 0; v < this.width; v++) for (const sums of fields.values()) argv.push(sums[v]);
    }
  }
}
