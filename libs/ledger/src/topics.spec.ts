import { describe, expect, it } from 'vitest';
import { ledgerTopicSpecs, TOPICS } from './topics';

describe(ledgerTopicSpecs.name, () => {
  it('names the three topics of the contract', () => {
    expect(TOPICS).toEqual({
      usage: 'tally.usage.v1',
      decision: 'tally.decision.v1',
      deadLetter: 'tally.dlq.v1',
    });
  });

  it('keeps usage forever and requires two in-sync replicas from replication 3', () => {
    const sut = ledgerTopicSpecs({ partitions: 6, replicationFactor: 3 });

    expect(sut).toEqual([
      {
        topic: 'tally.usage.v1',
        partitions: 6,
        replicationFactor: 3,
        configs: { 'retention.ms': '-1', 'min.insync.replicas': '2' },
      },
      {
        topic: 'tally.decision.v1',
        partitions: 6,
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      },
      { topic: 'tally.dlq.v1', partitions: 6, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } },
    ]);
  });

  it('asks one in-sync replica of a single-node cluster', () => {
    const sut = ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 });

    expect(sut.map((s) => s.configs?.['min.insync.replicas'])).toEqual(['1', '1', '1']);
  });
});
