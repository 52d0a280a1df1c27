import type { ResolvedTopicSpec, TopicSpec } from './topic-provisioner.port';

/** Kafka topic names: a contract with billing, analysts and every consumer (DESIGN §4). */
export const TOPICS = {
  /** Allowed decisions with cost > 0: the commercial ledger. */
  usage: 'tally.usage.v1',
  /**
   * The decisions without a usage record (quota denials, coalesced per second) and override
   * changes: with the usage topic, the audit trail's source (docs/adr/0009).
   */
  decision: 'tally.decision.v2',
  /**
   * The decision topic of the first contract (every decision, and override changes): nothing writes
   * it once every relay runs this contract; the projector, `tally replay` and `tally simulate` read
   * its history. Still created, so readers can subscribe to it on any cluster.
   */
  decisionV1: 'tally.decision.v1',
  /** Releases of concurrency leases (not usage; the projector does not read them). */
  lease: 'tally.lease.v1',
  /** Records a consumer could not process, kept for inspection and replay. */
  deadLetter: 'tally.dlq.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * The topics Tally creates at start. The usage topic is the source of truth for billing and
 * `tally replay`, so time never deletes it; the others keep the broker's retention.
 * `min.insync.replicas` is 2 from replication 3 on, so acks=all survives one lost replica.
 * Replication `auto` is resolved by the provisioner against the cluster (see {@link autoReplication}).
 */
export function ledgerTopicSpecs(options: {
  partitions: number;
  replicationFactor: ReplicationSetting;
}): TopicSpec[] {
  const rf = options.replicationFactor;
  const minIsr: Record<string, string> =
    rf === 'auto' ? {} : { 'min.insync.replicas': minInsyncReplicas(rf) };
  const base = { partitions: options.partitions, replicationFactor: rf };
  return [
    { topic: TOPICS.usage, ...base, configs: { 'retention.ms': '-1', ...minIsr } },
    { topic: TOPICS.decision, ...base, configs: { ...minIsr } },
    { topic: TOPICS.decisionV1, ...base, configs: { ...minIsr } },
    { topic: TOPICS.lease, ...base, configs: { ...minIsr } },
    { topic: TOPICS.deadLetter, ...base, configs: { ...minIsr } },
  ];
}

/** A number of replicas, or `auto`: as many as the cluster has brokers, at most 3. */
export type ReplicationSetting = number | 'auto';

/**
 * Replication 3 from three brokers on: with min.insync.replicas 2 a write acknowledged with acks=all
 * is on two brokers, so one broker may die (or be restarted) without refusing writes or losing any.
 * Fewer brokers cannot hold more replicas than they are; more replicas than 3 buy little for the
 * disk and network they cost.
 */
export function autoReplication(brokers: number): number {
  return Math.max(1, Math.min(3, brokers));
}

/** Two in-sync replicas from replication 3 on: one may be lost; below that, one (a lone copy). */
export function minInsyncReplicas(replicationFactor: number): string {
  return String(replicationFactor >= 3 ? 2 : 1);
}

/**
 * The spec with `auto` replaced by the cluster's figure, and its min.insync.replicas set to match
 * (a spec that names its own keeps it). Numeric specs are returned as they are.
 */
export function resolveReplication(spec: TopicSpec, brokers: number): ResolvedTopicSpec {
  if (spec.replicationFactor !== 'auto') return { ...spec, replicationFactor: spec.replicationFactor };
  const replicationFactor = autoReplication(brokers);
  return {
    ...spec,
    replicationFactor,
    configs: { 'min.insync.replicas': minInsyncReplicas(replicationFactor), ...spec.configs },
  };
}
