import { describe, expect, it, vi } from 'vitest';
import type { BreakerState } from './circuit-breaker';
import { NodeBreakers } from './node-breakers';

describe(NodeBreakers.name, () => {
  const options = { failureThreshold: 2, cooldownMs: 1000 };

  function setup(serving: string[]) {
    const changes: [BreakerState, number][] = [];
    const sut = new NodeBreakers(
      options,
      () => 0,
      () => serving,
      (worst, open) => changes.push([worst, open]),
    );
    return { sut, changes };
  }

  it("opens only the failing node's breaker: the other nodes keep admitting steps", () => {
    const { sut, changes } = setup(['a:1', 'b:2', 'c:3']);

    // when: node a fails twice (the threshold)
    for (let i = 0; i < 2; i++) {
      expect(sut.of('a:1').breaker.tryAcquire()).toBe(true);
      sut.of('a:1').breaker.failure();
    }

    // then: a refuses, b and c admit, and the summary says one of three is open
    expect(sut.of('a:1').breaker.tryAcquire()).toBe(false);
    expect(sut.of('b:2').breaker.tryAcquire()).toBe(true);
    expect(sut.of('c:3').breaker.tryAcquire()).toBe(true);
    expect(sut.summary()).toMatchObject({
      worst: 'open',
      open: 1,
      nodes: { 'a:1': 'open', 'b:2': 'closed', 'c:3': 'closed' },
    });
    expect(changes).toEqual([['open', 1]]);
  });

  it('drops the breaker of a node that serves no slot any more (its replica took over)', () => {
    const serving = ['a:1', 'b:2'];
    const { sut, changes } = setup(serving);
    sut.of('a:1').breaker.failure();
    sut.of('a:1').breaker.failure();

    // when: the slot map names the promoted replica instead of a
    serving[0] = 'd:4';
    sut.refresh();

    // then: health and metrics no longer count the dead node; the new master starts closed
    expect(sut.summary()).toMatchObject({
      worst: 'closed',
      open: 0,
      nodes: { 'd:4': 'closed', 'b:2': 'closed' },
    });
    expect(changes).toEqual([
      ['open', 1],
      ['closed', 0],
    ]);
    expect(sut.of('d:4').breaker.tryAcquire()).toBe(true);
  });

  it('notices without being told that a node with an open breaker no longer serves slots', async () => {
    vi.useFakeTimers();
    try {
      const serving = ['a:1'];
      const { sut, changes } = setup(serving);
      sut.of('a:1').breaker.failure();
      sut.of('a:1').breaker.failure();

      // when: the slot map moves to the promoted replica with no refresh event
      serving[0] = 'd:4';
      await vi.advanceTimersByTimeAsync(1000);

      // then: the metrics hear that no breaker is open any more
      expect(changes).toEqual([
        ['open', 1],
        ['closed', 0],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports counted failures short of the threshold as failing', () => {
    const { sut } = setup(['a:1']);
    sut.of('a:1').breaker.failure();
    expect(sut.summary()).toMatchObject({ worst: 'closed', failing: true });
  });
});
