import { describe, expect, it } from 'vitest';
import { batchStepArgs } from './batch-step';
import type { ProjectionDelta } from '../fold/projection-delta';
import { ProjectionKeys } from './projection-keys';

const AT = Date.parse('2026-11-30T09:41:27.500Z');
const OPTIONS = { auditRetentionMs: 86_400_000, dedupTtlMs: 3_600_000 };
const EMPTY: ProjectionDelta = {
  usage: [],
  usageTotals: [],
  audit: [],
  policySetVersions: [],
  dedup: [],
  applied: 0,
  duplicates: 0,
  refused: [],
};

describe(batchStepArgs.name, () => {
  const keys = new ProjectionKeys('live', 2);

  it('lays out a batch with more cells than a call stack holds arguments', () => {
    // given: 200k usage cells and 200k dedup tokens (a spread into push() overflows the stack)
    const n = 200_000;
    const usage = Array.from({ length: n }, (_, i) => ({
      tenant: 'acme',
      policy: 'p',
      key: `k${i}`,
      granularity: 'minute' as const,
      start: AT,
      cost: 1,
      count: 1,
    }));
    const dedup = Array.from({ length: n }, (_, i) => ({ token: `u:${i}`, timeMs: AT }));
    // when
    const sut = batchStepArgs(keys, { ...EMPTY, usage, dedup, applied: n }, [], OPTIONS);
    // then: one packed group holding every cell, a field with its cost and count each
    expect(sut.argv.slice(7 + n, 11 + n)).toEqual([1, 6, n, 'k0']);
    expect(sut.argv.length).toBeGreaterThan(n * 4);
  });

  it('stores only the offsets when nothing is to be applied (a batch of duplicates or dead letters)', () => {
    const sut = batchStepArgs(
      keys,
      EMPTY,
      [{ topic: 'tally.usage.v1', partition: 3, nextOffset: '42' }],
      OPTIONS,
    );
    expect(sut.keys).toEqual([
      'tally:proj:{live:s2}:offsets',
      'tally:proj:{live:s2}:meta',
      'tally:proj:{live:s2}:versions',
      'tally:proj:{live:s2}:audit:~',
    ]);
    expect(sut.argv).toEqual([
      86_400_000,
      3_600_000,
      0,
      '9007199254740991',
      0,
      0,
      0,
      0,
      0,
      1,
      'tally.usage.v1:3',
      '42',
    ]);
    expect(sut.targets).toEqual(sut.keys.map(() => ({ kind: 'fixed' })));
  });

  it("adds an event's id-hour mark to that hour's group, after the event-hour marks", () => {
    // given a token marked at 09:41 (its time) and at 08:59 (its id time), and another only at 09:41
    const delta: ProjectionDelta = {
      ...EMPTY,
      dedup: [
        { token: 'u:E1', timeMs: AT },
        { token: 'u:E2', timeMs: AT },
      ],
      idDedup: [{ token: 'u:E1', timeMs: AT - 42 * 60_000 }],
      applied: 2,
    };
    const sut = batchStepArgs(keys, delta, [], OPTIONS);
    expect(sut.keys.slice(4)).toEqual([
      'tally:proj:{live:s2}:ids:20261130T0900Z',
      'tally:proj:{live:s2}:ids:20261130T0800Z',
    ]);
    expect(sut.argv.slice(4, 13)).toEqual([2, 5, 2, 'u:E1', 'u:E2', 6, 1, 'u:E1', 0]);
  });

  it('names every key once and lays out each section as the script legend says', () => {
    const delta: ProjectionDelta = {
      ...EMPTY,
      usageTotals: [{ tenant: 'acme', policy: 'p', granularity: 'hour', start: AT, cost: 5, count: 2 }],
      usage: [{ tenant: 'acme', policy: 'p', key: 'k1', granularity: 'hour', start: AT, cost: 5, count: 2 }],
      audit: [
        {
          id: 'E1',
          timeMs: AT,
          type: 'denied',
          tenant: 'acme',
          policy: 'p',
          reason: 'burst_quota_exhausted',
          count: 3,
          selectors: { tenant: 'acme' },
          policySetVersion: 'v1',
        },
        {
          id: 'policy_reload:v1',
          timeMs: AT - 1,
          type: 'policy_reload',
          count: 1,
          selectors: {},
          policySetVersion: 'v1',
        },
      ],
      dedup: [
        { token: 'u:E1', timeMs: AT },
        { token: 'd:E1', timeMs: AT },
        { token: 'u:E0', timeMs: AT - 3_600_000 },
      ],
      applied: 3,
    };

    const sut = batchStepArgs(keys, delta, [{ topic: 't', partition: 0, nextOffset: '7' }], OPTIONS);

    expect(sut.keys.slice(4)).toEqual([
      'tally:proj:{live:s2}:ids:20261130T0900Z',
      'tally:proj:{live:s2}:ids:20261130T0800Z',
      'tally:proj:{live:s2}:keys:acme:p:hour:20261130T0900Z',
      'tally:proj:{live:s2}:usage:acme:hour:20261130T0900Z',
      'tally:proj:{live:s2}:audit:acme',
    ]);
    expect(sut.targets.slice(4)).toEqual([
      { kind: 'ids', timeMs: AT },
      { kind: 'ids', timeMs: AT - 3_600_000 },
      { kind: 'keys', tenant: 'acme', policy: 'p', granularity: 'hour', start: AT },
      { kind: 'usage', tenant: 'acme', granularity: 'hour', start: AT },
      { kind: 'audit', tenant: 'acme' },
    ]);
    expect(sut.argv).toEqual([
      86_400_000,
      3_600_000,
      3,
      '9007199254740991', // MAX: no counter passes 2^53 − 1
      // dedup: 2 groups
      2,
      5,
      2,
      'u:E1',
      'd:E1',
      6,
      1,
      'u:E0',
      // packed: 1 group of 1 field (the policy key), its cost, its count
      1,
      7,
      1,
      'k1',
      5,
      2,
      // hashes: 1 group of 2 fields, then their increments
      1,
      8,
      2,
      'cost:p',
      'count:p',
      5,
      2,
      // audit: 1 (the reload goes to its own section)
      1,
      9,
      AT,
      '["E1","denied","acme","p","burst_quota_exhausted",3,{"tenant":"acme"},"v1"]',
      // reloads: 1
      1,
      'v1',
      AT - 1,
      '["policy_reload:v1","policy_reload",null,null,null,1,{},"v1"]',
      // offsets: 1
      1,
      't:0',
      '7',
    ]);
  });

  it('groups the fields of one key, in first-seen order, summing a field met twice', () => {
    // given: two keys of one hash, a cell of another hash, then a cell of the first hash again
    const cell = { tenant: 'acme', policy: 'p', granularity: 'hour' as const, start: AT, count: 1 };
    const delta: ProjectionDelta = {
      ...EMPTY,
      usage: [
        { ...cell, key: 'k1', cost: 2 },
        { ...cell, key: 'k2', cost: 3 },
        { ...cell, start: AT + 3_600_000, key: 'k1', cost: 4 },
        { ...cell, key: 'k1', cost: 5 },
      ],
    };
    // when
    const sut = batchStepArgs(keys, delta, [], OPTIONS);
    // then
    expect(sut.keys.slice(4)).toEqual([
      'tally:proj:{live:s2}:keys:acme:p:hour:20261130T0900Z',
      'tally:proj:{live:s2}:keys:acme:p:hour:20261130T1000Z',
    ]);
    expect(sut.argv.slice(4, -3)).toEqual([
      0,
      // packed: two groups; k1 twice in the first, summed (cost 2 + 5, count 1 + 1)
      2,
      5,
      2,
      'k1',
      'k2',
      7,
      3,
      2,
      1,
      6,
      1,
      'k1',
      4,
      1,
      // hashes: none
      0,
    ]);
  });

  it('sends tenant-less audit rows to the tenant-less trail, the reloads key, without a new KEYS entry', () => {
    const delta: ProjectionDelta = {
      ...EMPTY,
      audit: [{ id: 'E2', timeMs: AT, type: 'degraded', count: 1, selectors: {}, policySetVersion: 'v1' }],
    };
    const sut = batchStepArgs(keys, delta, [], OPTIONS);
    expect(sut.keys).toHaveLength(4);
    expect(sut.argv.slice(4, 11)).toEqual([0, 0, 0, 1, 4, AT, '["E2","degraded",null,null,null,1,{},"v1"]']);
  });
});
