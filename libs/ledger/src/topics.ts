import type { TopicSpec } from './topic-provisioner.port';

/** Kafka topic names: a contract with billing, analysts and every consumer (DESIGN §4). */
export const TOPICS = {
  /** Allowed decisions with cost > 0: the commercial ledger. */
  usage: 'tally.usage.v1',
  /** Every decision, denials included (repeated denials coalesced per second). */
  decision: 'tally.decision.v1',
  /** Records a consumer could not process, kept for inspection and replay. */
  deadLetter: 'tally.dlq.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * The topics Tally creates at start. The usage topic is the source of truth for billing and
 * `tally replay`, so time never deletes it; the others keep the broker's retention.
 * `min.insync.replicas` is 2 from replication 3 on, so acks=all survives one lost replica.
 */
export function ledgerTopicSpecs(options: { partitions: number; replicationFactor: number }): TopicSpec[] {
  const minIsr = String(options.replicationFactor >= 3 ? 2 : 1);
  const base = { partitions: options.partitions, replicationFactor: options.replicationFactor };
  return [
    { topic: TOPICS.usage, ...base, configs: { 'retention.ms': '-1', 'min.insync.replicas': minIsr } },
    { topic: TOPICS.decision, ...base, configs: { 'min.insync.replicas': minIsr } },
    { topic: TOPICS.deadLetter, ...base, configs: { 'min.insync.replicas': minIsr } },
  ];
}
