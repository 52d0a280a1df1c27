import type { KafkaAdminPort, LedgerConsumer } from '@tally/ledger';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { resolveProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';

type Commit = { topic: string; partition: number; offset: string }[];

/** A consumer that records its commits (nothing stored in Redis, so the restore commits nothing). */
function consumer(commits: Commit[]): LedgerConsumer {
  return {
    commitOffsets: (offsets: Commit) => {
      if (offsets.length > 0) commits.push(offsets);
      return Promise.resolve();
    },
    seek: () => undefined,
  } as unknown as LedgerConsumer;
}

function positions(commitIntervalMs: number, commits: Commit[]): ProjectorPositions {
  const namespaces = {
    shards: () => Promise.resolve(12),
    offsets: () => Promise.resolve(new Map<string, string>()),
  } as unknown as ProjectionNamespaces;
  const options = resolveProjectorOptions({
    redis: { url: 'redis://unused' } as never,
    groupId: 'g',
    topics: { usage: 'u', decision: 'd', deadLetter: 'dlq' },
    topicSpecs: [],
    auditRetentionMs: 60_000,
    commitIntervalMs,
  });
  const admin = { fetchTopicOffsets: () => Promise.resolve([]) } as unknown as KafkaAdminPort;
  const made = new ProjectorPositions(namespaces, admin, options);
  made.assigned(consumer(commits), { u: [0, 1, 2] });
  return made;
}

const mark = (partition: number, nextOffset: string) => ({ topic: 'u', partition, nextOffset });

describe('ProjectorPositions Kafka commits', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('commits every step at once with no interval', async () => {
    const commits: Commit[] = [];
    const p = positions(0, commits);
    await p.commit([mark(0, '5')]);
    await p.commit([mark(0, '9')]);
    expect(commits).toEqual([
      [{ topic: 'u', partition: 0, offset: '5' }],
      [{ topic: 'u', partition: 0, offset: '9' }],
    ]);
  });

  it('sends the steps of one interval as one commit of the latest offset per partition', async () => {
    const commits: Commit[] = [];
    const p = positions(1_000, commits);
    const first = p.commit([mark(0, '5')]); // the first commit goes at once
    await vi.advanceTimersByTimeAsync(0);
    await first;
    const waiting = [p.commit([mark(0, '7'), mark(1, '3')]), p.commit([mark(0, '9')])];
    await vi.advanceTimersByTimeAsync(999);
    expect(commits).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(waiting);
    expect(commits).toEqual([
      [{ topic: 'u', partition: 0, offset: '5' }],
      [
        { topic: 'u', partition: 0, offset: '9' },
        { topic: 'u', partition: 1, offset: '3' },
      ],
    ]);
  });

  it('commits what waits when flushed (shutdown), and the waiting callers return', async () => {
    const commits: Commit[] = [];
    const p = positions(1_000, commits);
    await vi.advanceTimersByTimeAsync(0);
    void p.commit([mark(0, '5')]);
    await vi.advanceTimersByTimeAsync(0);
    const waiting = p.commit([mark(2, '11')]);
    await p.flushCommits();
    await waiting;
    expect(commits).toEqual([
      [{ topic: 'u', partition: 0, offset: '5' }],
      [{ topic: 'u', partition: 2, offset: '11' }],
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(commits).toHaveLength(2);
  });

  it('at shutdown commits what waits, then nothing more (kafkajs refuses commits once stopped)', async () => {
    const commits: Commit[] = [];
    const p = positions(1_000, commits);
    await vi.advanceTimersByTimeAsync(0);
    void p.commit([mark(0, '5')]);
    await vi.advanceTimersByTimeAsync(0);
    const waiting = p.commit([mark(1, '8')]);
    await p.closeCommits();
    await waiting;
    await p.commit([mark(1, '12')]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(commits).toEqual([
      [{ topic: 'u', partition: 0, offset: '5' }],
      [{ topic: 'u', partition: 1, offset: '8' }],
    ]);
  });

  it('commits no partition this member no longer owns (a step that ended after a rebalance)', async () => {
    const commits: Commit[] = [];
    const p = positions(1_000, commits);
    await vi.advanceTimersByTimeAsync(0);
    const c = consumer(commits);
    p.assigned(c, { u: [0] }); // partition 1 moved to another member while its step ran
    await vi.advanceTimersByTimeAsync(0);
    const waiting = p.commit([mark(0, '4'), mark(1, '7')]);
    await vi.advanceTimersByTimeAsync(1_000);
    await waiting;
    expect(commits).toEqual([[{ topic: 'u', partition: 0, offset: '4' }]]);
  });

  it('waits at most a second for the last commit at shutdown (a coordinator that does not answer)', async () => {
    const p = positions(1_000, []);
    p.assigned({ commitOffsets: () => new Promise(() => {}), seek: () => undefined } as never, { u: [0] });
    await vi.advanceTimersByTimeAsync(0);
    void p.commit([mark(0, '5')]);
    let closed = false;
    void p.closeCommits().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toBe(true);
  });
});
