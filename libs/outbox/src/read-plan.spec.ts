import { describe, expect, it } from 'vitest';
import { backloggedStreams, planReads } from './read-plan';

const streams = ['s0', 's1', 's2', 's3'];

describe(planReads.name, () => {
  it('idle on one node: one blocking call over every stream, the budget split evenly', () => {
    expect(planReads(streams, new Set(), 1000, { blockMs: 500, perKey: false })).toEqual([
      { keys: streams, count: 250, blockMs: 500 },
    ]);
  });

  it('idle on one node without blockMs (the read after a linger): one call that answers at once', () => {
    expect(planReads(streams, new Set(), 100, { perKey: false })).toEqual([{ keys: streams, count: 25 }]);
  });

  it('backlogged: half the budget to hot streams, half to the rest, no blocking', () => {
    expect(planReads(streams, new Set(['s2']), 1000, { blockMs: 500, perKey: false })).toEqual([
      { keys: ['s2'], count: 500 },
      { keys: ['s0', 's1', 's3'], count: 167 },
    ]);
  });

  it('every stream backlogged: the whole budget over them, not the half meant for hot streams', () => {
    expect(planReads(streams, new Set(streams), 1000, { blockMs: 500, perKey: false })).toEqual([
      { keys: streams, count: 250 },
    ]);
  });

  it('on Cluster: one non-blocking call per stream (one slot per call)', () => {
    expect(planReads(['s0', 's1'], new Set(['s1']), 100, { blockMs: 500, perKey: true })).toEqual([
      { keys: ['s1'], count: 50 },
      { keys: ['s0'], count: 50 },
    ]);
  });

  it('never asks for fewer than 10 entries per stream', () => {
    expect(planReads(streams, new Set(), 8, { blockMs: 1, perKey: false })[0].count).toBe(10);
  });
});

describe(backloggedStreams.name, () => {
  it('names the streams that returned a full count', () => {
    const calls = [{ keys: ['s0', 's1'], count: 2 }];
    const entries = [
      { stream: 's0', id: '1-0', fields: {} },
      { stream: 's0', id: '1-1', fields: {} },
      { stream: 's1', id: '1-0', fields: {} },
    ];
    expect([...backloggedStreams(calls, entries)]).toEqual(['s0']);
  });
});
