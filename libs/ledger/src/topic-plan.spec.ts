import { describe, expect, it } from 'vitest';
import { planTopics } from './topic-plan';

const spec = (topic: string, partitions = 12, replicationFactor = 1) => ({
  topic,
  partitions,
  replicationFactor,
});

describe(planTopics.name, () => {
  it('creates what is missing and keeps what exists unchanged when it matches', () => {
    const sut = planTopics([spec('a'), spec('b')], [{ topic: 'b', partitions: 12, replicationFactor: 1 }]);

    expect(sut).toEqual({ create: [spec('a')], existing: ['b'], grow: [], mismatches: [] });
  });

  it('grows a topic with fewer partitions than its spec', () => {
    const sut = planTopics([spec('a', 12)], [{ topic: 'a', partitions: 3, replicationFactor: 1 }]);

    expect(sut.grow).toEqual([{ topic: 'a', count: 12 }]);
    expect(sut.mismatches).toEqual([]);
  });

  it('grows a topic only to a multiple of its count, and reports any other count', () => {
    const sut = planTopics(
      [spec('a', 18), spec('b', 24)],
      [
        { topic: 'a', partitions: 12, replicationFactor: 1 },
        { topic: 'b', partitions: 12, replicationFactor: 1 },
      ],
    );

    expect(sut.grow).toEqual([{ topic: 'b', count: 24 }]);
    expect(sut.mismatches).toEqual([{ topic: 'a', setting: 'partitions', expected: 18, actual: 12 }]);
  });

  it('reports, never shrinks, a topic with more partitions, and a different replication', () => {
    const sut = planTopics([spec('a', 4, 3)], [{ topic: 'a', partitions: 8, replicationFactor: 1 }]);

    expect(sut.grow).toEqual([]);
    expect(sut.create).toEqual([]);
    expect(sut.mismatches).toEqual([
      { topic: 'a', setting: 'partitions', expected: 4, actual: 8 },
      { topic: 'a', setting: 'replicationFactor', expected: 3, actual: 1 },
    ]);
  });
});
