import { auditMember } from './audit-entry';
import type { ProjectionDelta } from './projection-delta';
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
 */
export function batchStepArgs(
  keys: ProjectionKeys,
  delta: ProjectionDelta,
  offsets: readonly OffsetMark[],
  options: BatchStepOptions,
): BatchStepArgs {
  const list = [keys.offsets(), keys.meta(), keys.versions(), keys.audit(null)];
  const index = new Map(list.map((key, i) => [key, i + 1]));
  const ref = (key: string): number => {
    let i = index.get(key);
    if (i === undefined) {
      list.push(key);
      i = list.length;
      index.set(key, i);
    }
    return i;
  };

  const argv: (string | number)[] = [options.auditRetentionMs, options.dedupTtlMs, delta.applied];

  const groups = new Map<string, string[]>();
  for (const { token, timeMs } of delta.dedup) {
    const key = keys.ids(timeMs);
    const tokens = groups.get(key) ?? [];
    tokens.push(token);
    groups.set(key, tokens);
  }
  argv.push(groups.size);
  // Appends item by item: spreading a batch-sized array into push() overflows the call stack.
  for (const [key, tokens] of groups) {
    argv.push(ref(key), tokens.length);
    for (const token of tokens) argv.push(token);
  }

  // Grouped by key: the script reads and writes each hash or sorted set with one command per key
  // (HMGET + HSET, ZMSCORE + ZADD) instead of one command per field, which is what a batch of
  // distinct usage cells (most keys of a tenant differ) spends its Redis time on otherwise.
  const hashes = new FieldGroups();
  for (const t of delta.usageTotals) {
    const key = ref(keys.usage(t.tenant, t.granularity, t.start));
    hashes.add(key, usageField('cost', t.policy), t.cost);
    hashes.add(key, usageField('count', t.policy), t.count);
  }
  for (const u of delta.usage) {
    const key = ref(keys.keyUsage(u.tenant, u.policy, u.granularity, u.start));
    hashes.add(key, usageField('cost', u.key), u.cost);
    hashes.add(key, usageField('count', u.key), u.count);
  }
  hashes.appendTo(argv);

  const zsets = new FieldGroups();
  for (const top of delta.topKeys)
    zsets.add(ref(keys.topKeys(top.tenant, top.policy, top.day)), top.key, top.cost);
  zsets.appendTo(argv);

  const rows = delta.audit.filter((entry) => entry.type !== 'policy_reload');
  argv.push(rows.length);
  for (const row of rows) argv.push(ref(keys.audit(row.tenant ?? null)), row.timeMs, auditMember(row));

  const reloads = delta.audit.filter((entry) => entry.type === 'policy_reload');
  argv.push(reloads.length);
  for (const reload of reloads) argv.push(reload.policySetVersion, reload.timeMs, auditMember(reload));

  argv.push(offsets.length);
  for (const o of offsets) argv.push(offsetField(o.topic, o.partition), o.nextOffset);

  return { keys: list, argv };
}

/**
 * Increments grouped by key index, in first-seen order (the arguments stay deterministic); a field
 * met twice for one key is summed here, so the script never sees a field twice in a group.
 */
class FieldGroups {
  private readonly groups = new Map<number, Map<string, number>>();

  add(key: number, field: string, by: number): void {
    let fields = this.groups.get(key);
    if (fields === undefined) this.groups.set(key, (fields = new Map<string, number>()));
    fields.set(field, (fields.get(field) ?? 0) + by);
  }

  /**
   * `n` groups of (key index, m, field * m, increment * m): the fields lie contiguous, so the script
   * hands them to HMGET / ZMSCORE straight from ARGV. Item by item: see the dedup section.
   */
  appendTo(argv: (string | number)[]): void {
    argv.push(this.groups.size);
    for (const [key, fields] of this.groups) {
      argv.push(key, fields.size);
      for (const field of fields.keys()) argv.push(field);
      for (const by of fields.values()) argv.push(by);
    }
  }
}
