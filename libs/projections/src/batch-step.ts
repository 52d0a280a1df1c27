import { auditMember } from './audit-entry';
import type { ProjectionDelta } from './projection-delta';
import type { Granularity } from './granularity';
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
}

/**
 * Turns a folded batch into the arguments of the one atomic step (see the legend of
 * `lua/apply-batch.lua`). Pure: the same delta gives the same arguments, so it is tested with exact
 * strings. Every key is a key of `keys.namespace`, hence of one Cluster slot.
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
  const argv: (string | number)[] = [options.auditRetentionMs, options.dedupTtlMs, delta.applied];

  const groups = new Map<number, string[]>();
  for (const { token, timeMs } of delta.dedup) {
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
  for (const row of rows) argv.push(refs.ref(keys.audit(row.tenant ?? null)), row.timeMs, auditMember(row));

  const reloads = delta.audit.filter((entry) => entry.type === 'policy_reload');
  argv.push(reloads.length);
  for (const reload of reloads) argv.push(reload.policySetVersion, reload.timeMs, auditMember(reload));

  argv.push(offsets.length);
  for (const o of offsets) argv.push(offsetField(o.topic, o.partition), o.nextOffset);

  return { keys: refs.list, argv };
}

/**
 * The KEYS of a step and the index of each, the four fixed ones first. Keys are looked up by their
 * parts in nested maps: the parts are strings the events already hold, so a lookup hashes nothing
 * new, where building the key string for every cell showed as a tenth of a replay's CPU.
 */
class StepKeys {
  readonly list: string[];
  private readonly index: Map<string, number>;
  private readonly idsByHour = new Map<number, number>();
  private readonly usageByTenant = new Map<string | null, Map<Granularity, Map<number, number>>>();
  private readonly keysByTenant = new Map<
    string | null,
    Map<string, Map<Granularity, Map<number, number>>>
  >();

  constructor(private readonly keys: ProjectionKeys) {
    this.list = [keys.offsets(), keys.meta(), keys.versions(), keys.audit(null)];
    this.index = new Map(this.list.map((key, i) => [key, i + 1]));
  }

  ref(key: string): number {
    let i = this.index.get(key);
    if (i === undefined) {
      this.list.push(key);
      i = this.list.length;
      this.index.set(key, i);
    }
    return i;
  }

  ids(timeMs: number): number {
    const hour = Math.floor(timeMs / HOUR_MS);
    let i = this.idsByHour.get(hour);
    if (i === undefined) this.idsByHour.set(hour, (i = this.ref(this.keys.ids(timeMs))));
    return i;
  }

  usage(tenant: string | null, granularity: Granularity, start: number): number {
    const byStart = inner(inner(this.usageByTenant, tenant), granularity);
    let i = byStart.get(start);
    if (i === undefined) byStart.set(start, (i = this.ref(this.keys.usage(tenant, granularity, start))));
    return i;
  }

  keyUsage(tenant: string | null, policy: string, granularity: Granularity, start: number): number {
    const byStart = inner(inner(inner(this.keysByTenant, tenant), policy), granularity);
    let i = byStart.get(start);
    if (i === undefined)
      byStart.set(start, (i = this.ref(this.keys.keyUsage(tenant, policy, granularity, start))));
    return i;
  }
}

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
    else for (let v = 0; v < this.width; v++) sums[v] += by[v];
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
