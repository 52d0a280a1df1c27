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

  const hincr: (string | number)[] = [];
  for (const t of delta.usageTotals) {
    const key = ref(keys.usage(t.tenant, t.granularity, t.start));
    hincr.push(key, usageField('cost', t.policy), t.cost, key, usageField('count', t.policy), t.count);
  }
  for (const u of delta.usage) {
    const key = ref(keys.keyUsage(u.tenant, u.policy, u.granularity, u.start));
    hincr.push(key, usageField('cost', u.key), u.cost, key, usageField('count', u.key), u.count);
  }
  argv.push(hincr.length / 3);
  for (const value of hincr) argv.push(value);

  argv.push(delta.topKeys.length);
  for (const top of delta.topKeys)
    argv.push(ref(keys.topKeys(top.tenant, top.policy, top.day)), top.key, top.cost);

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
