import type { ResolvedTopicSpec, TopicMismatch } from './topic-provisioner.port';

/** What the broker reports about one existing topic. */
export interface ExistingTopic {
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
}

export interface TopicPlan {
  readonly create: ResolvedTopicSpec[];
  readonly existing: string[];
  /** Existing topics with fewer partitions than their spec, and the count to grow them to. */
  readonly grow: { topic: string; count: number }[];
  readonly mismatches: TopicMismatch[];
}

/**
 * Decides what provisioning does. Partitions only grow: shrinking is impossible in Kafka, and
 * growing an existing topic moves keys to other partitions (per-key order breaks across the
 * change), which is why it is reported in `expanded` rather than done silently. They grow only to a
 * multiple of today's count: a key's partition is `h mod P`, and a projection namespace's shard is
 * `partition mod shards` with `shards` dividing today's count, so a key keeps its shard (and a
 * re-published twin meets its first copy's dedup set) only when `P` stays a multiple of it. Any
 * other count is reported as a mismatch and left alone (docs/operations.md).
 */
export function planTopics(
  specs: readonly ResolvedTopicSpec[],
  existing: readonly ExistingTopic[],
): TopicPlan {
  const byName = new Map(existing.map((t) => [t.topic, t]));
  const plan: TopicPlan = { create: [], existing: [], grow: [], mismatches: [] };
  for (const spec of specs) {
    const found = byName.get(spec.topic);
    if (!found) {
      plan.create.push(spec);
      continue;
    }
    plan.existing.push(spec.topic);
    const multiple = spec.partitions % found.partitions === 0;
    if (found.partitions < spec.partitions && multiple)
      plan.grow.push({ topic: spec.topic, count: spec.partitions });
    if (found.partitions > spec.partitions || !multiple) {
      plan.mismatches.push({
        topic: spec.topic,
        setting: 'partitions',
        expected: spec.partitions,
        actual: found.partitions,
      });
    }
    if (found.replicationFactor !== spec.replicationFactor) {
      plan.mismatches.push({
        topic: spec.topic,
        setting: 'replicationFactor',
        expected: spec.replicationFactor,
        actual: found.replicationFactor,
      });
    }
  }
  return plan;
}
