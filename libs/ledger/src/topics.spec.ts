import { describe, expect, it } from 'vitest';
import { autoReplication, ledgerTopicSpecs, resolveReplication, TOPICS } from './topics';

describe(ledgerTopicSpecs.name, () => {
  it('names the topics of the contract, the first decision topic kept for its history', () => {
    expect(TOPICS).toEqual({
      usage: 'tally.usage.v1',
      decision: 'tally.decision.v2',
      decisionV1: 'tally.decision.v1',
      lease: 'tally.lease.v1',
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
        topic: 'tally.decision.v2',
        partitions: 6,
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      },
      {
        topic: 'tally.decision.v1',
        partitions: 6,
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      },
      {
        topic: 'tally.lease.v1',
        partitions: 6,
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      },
      { topic: 'tally.dlq.v1', partitions: 6, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } },
    ]);
  });

  it('asks one in-sync replica of a single-node cluster', () => {
    const sut = ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 });

    expect(sut.map((s) => s.configs?.['min.insync.replicas'])).toEqual(['1', '1', '1', '1', '1']);
  });
});

describe(resolveReplication.name, () => {
  it('gives auto replication the broker count, at most 3, and the matching in-sync replicas', () => {
    const specs = ledgerTopicSpecs({ partitions: 6, replicationFactor: 'auto' });

    const sut = (brokers: number) => specs.map((s) => resolveReplication(s, brokers));

    expect(sut(3)[0]).toEqual({
      topic: 'tally.usage.v1',
      partitions: 6,
      replicationFactor: 3,
      configs: { 'retention.ms': '-1', 'min.insync.replicas': '2' },
    });
    expect(sut(3).map((s) => s.configs?.['min.insync.replicas'])).toEqual(['2', '2', '2', '2', '2']);
    expect(sut(1).map((s) => [s.replicationFactor, s.configs?.['min.insync.replicas']])).toEqual([
      [1, '1'],
      [1, '1'],
      [1, '1'],
      [1, '1'],
      [1, '1'],
    ]);
    expect(sut(5)[1]).toEqual(sut(3)[1]);
  });

  it("leaves a numeric replication and a spec's own in-sync replicas alone", () => {
    const numeric = {
      topic: 'a',
      partitions: 1,
      replicationFactor: 2,
      configs: { 'min.insync.replicas': '2' },
    };
    const named = {
      topic: 'b',
      partitions: 1,
      replicationFactor: 'auto' as const,
      configs: { 'min.insync.replicas': '3' },
    };

    expect(resolveReplication(numeric, 5)).toEqual(numeric);
    expect(resolveReplication(named, 3)).toEqual({ ...named, replicationFactor: 3 });
  });
});

describe(autoReplication.name, () => {
  it.each([
    [0, 1],
    [1, 1],
    [2, 2],
    [3, 3],
    [7, 3],
  ])('%i brokers → replication %i', (brokers, want) => {
    expect(autoReplication(brokers)).toBe(want);
  });
});
