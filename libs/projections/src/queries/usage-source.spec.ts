import type { ChainableCommander } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ProjectionCorruptError } from './projection-corrupt.error';
import { ProjectionKeys } from '../sink/projection-keys';
import { usageSource } from './usage-source';

const HOUR = Date.parse('2026-11-30T09:00:00Z');
const keys = new ProjectionKeys('live', 0);

/** The commands a read queues, as [command, ...arguments]. */
function queued(read: { queue(pipeline: ChainableCommander): void }): unknown[][] {
  const calls: unknown[][] = [];
  const pipeline = {
    hmget: (...args: unknown[]) => calls.push(['hmget', ...args]),
    hgetall: (...args: unknown[]) => calls.push(['hgetall', ...args]),
  };
  read.queue(pipeline as unknown as ChainableCommander);
  return calls;
}

describe(usageSource.name, () => {
  describe('one key of one policy', () => {
    const sut = usageSource(keys, { tenant: 'a c', policy: 'p1', key: 'acme|svc:1' });

    it('reads the one packed field of the `keys:` hash, for rows and for the total', () => {
      const hash = 'tally:proj:{live:s0}:keys:a%20c:p1:hour:20261130T0900Z';
      expect(queued(sut.rows('hour', HOUR + 59_000))).toEqual([['hmget', hash, 'acme|svc:1']]);
      expect(queued(sut.total('month', HOUR))).toEqual([
        ['hmget', 'tally:proj:{live:s0}:keys:a%20c:p1:month:20261101T0000Z', 'acme|svc:1'],
      ]);
    });

    it('reads `<cost>:<count>` as the policy row, and an absent field as an empty bucket', () => {
      expect(sut.rows('hour', HOUR).decode(['42:17'])).toEqual(new Map([['p1', { cost: 42, count: 17 }]]));
      expect(sut.total('hour', HOUR).decode(['42:17'])).toEqual({ cost: 42, count: 17 });
      expect(sut.rows('hour', HOUR).decode([null])).toEqual(new Map([['p1', { cost: 0, count: 0 }]]));
      expect(sut.total('day', HOUR).decode([null])).toEqual({ cost: 0, count: 0 });
    });

    it.each(['42', '42:', ':17', '4.2:1', '-1:1', 'cost:1', '1:2:3', ''])(
      'throws ProjectionCorruptError naming the bucket for a stored %j',
      (raw) => {
        const read = () => sut.total('day', HOUR).decode([raw]);
        expect(read).toThrow(ProjectionCorruptError);
        expect(read).toThrow(
          'projection namespace live: the usage of key "acme|svc:1" (tenant "a c", policy p1) in the day ' +
            'bucket of 2026-11-30T00:00:00Z is not <cost>:<count>; replay the namespace',
        );
      },
    );
  });

  describe('one policy', () => {
    const sut = usageSource(keys, { tenant: 'acme', policy: 'p1' });

    it("reads the policy's pair of the `usage:` hash, for rows and for the total", () => {
      const call = ['hmget', 'tally:proj:{live:s0}:usage:acme:hour:20261130T0900Z', 'cost:p1', 'count:p1'];
      expect(queued(sut.rows('hour', HOUR))).toEqual([call]);
      expect(queued(sut.total('hour', HOUR))).toEqual([call]);
      expect(sut.rows('hour', HOUR).decode(['5', null])).toEqual(new Map([['p1', { cost: 5, count: 0 }]]));
    });

    it.each([
      ['x', '1'],
      ['1', '-2'],
      ['1.5', '1'],
      ['', '1'],
      ['1', '1e3'],
    ])('throws ProjectionCorruptError naming the bucket for a stored pair %j', (cost, count) => {
      const read = () => sut.total('day', HOUR).decode([cost, count]);
      expect(read).toThrow(
        'projection namespace live: the usage of policy p1 (tenant "acme") in the day bucket of ' +
          '2026-11-30T00:00:00Z is not a decimal integer of at most 9007199254740991; replay the namespace',
      );
      expect(() => sut.rows('day', HOUR).decode([cost, count])).toThrow(ProjectionCorruptError);
    });
  });

  describe('every policy', () => {
    const sut = usageSource(keys, { tenant: 'acme' });

    it('reads rows whole, and the total from the all-policies pair (each decision once)', () => {
      expect(queued(sut.rows('hour', HOUR))).toEqual([
        ['hgetall', 'tally:proj:{live:s0}:usage:acme:hour:20261130T0900Z'],
      ]);
      expect(queued(sut.total('hour', HOUR))).toEqual([
        ['hmget', 'tally:proj:{live:s0}:usage:acme:hour:20261130T0900Z', 'cost:_all', 'count:_all'],
      ]);
      expect(sut.rows('hour', HOUR).decode({ 'cost:p1': '3', 'count:p1': '1' })).toEqual(
        new Map([['p1', { cost: 3, count: 1 }]]),
      );
      expect(sut.total('hour', HOUR).decode(['9', '4'])).toEqual({ cost: 9, count: 4 });
    });

    it('throws ProjectionCorruptError for a bad value of any policy of a row, and of the total', () => {
      expect(() => sut.rows('hour', HOUR).decode({ 'cost:p1': '3', 'count:p2': 'NaN' })).toThrow(
        'projection namespace live: the usage of policy p2 (tenant "acme") in the hour bucket of ' +
          '2026-11-30T09:00:00Z is not a decimal integer of at most 9007199254740991; replay the namespace',
      );
      expect(() => sut.total('hour', HOUR).decode(['9', 'four'])).toThrow(
        /policy _all .* not a decimal integer/,
      );
    });
  });

  it('refuses a key without its policy', () => {
    expect(() => usageSource(keys, { tenant: 'acme', key: 'k' })).toThrow(RangeError);
  });
});
