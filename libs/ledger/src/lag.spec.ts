import { describe, expect, it } from 'vitest';
import { computeLag, nextOffset } from './lag';

const w = (partition: number, low: string, high: string) => ({ topic: 't', partition, low, high });

describe(computeLag.name, () => {
  it('is the high watermark minus the committed offset', () => {
    const sut = computeLag(
      [w(0, '0', '10'), w(1, '0', '7')],
      [
        { topic: 't', partition: 0, offset: '4' },
        { topic: 't', partition: 1, offset: '7' },
      ],
    );

    expect(sut.map((p) => [p.partition, p.committed, p.lag])).toEqual([
      [0, '4', 6],
      [1, '7', 0],
    ]);
  });

  it('counts everything retained when the group never committed', () => {
    const sut = computeLag([w(0, '5', '9')], [{ topic: 't', partition: 0, offset: null }]);

    expect(sut).toEqual([{ topic: 't', partition: 0, low: '5', high: '9', committed: null, lag: 4 }]);
  });

  it('does not count records retention already deleted', () => {
    const sut = computeLag([w(0, '100', '120')], [{ topic: 't', partition: 0, offset: '20' }]);

    expect(sut[0].lag).toBe(20);
  });

  it('stays exact beyond 2^53', () => {
    const sut = computeLag(
      [w(0, '0', '9007199254740995')],
      [{ topic: 't', partition: 0, offset: '9007199254740993' }],
    );

    expect(sut[0].lag).toBe(2);
  });
});

describe(nextOffset.name, () => {
  it('adds one without losing precision', () => {
    expect(nextOffset('41')).toBe('42');
    expect(nextOffset('9007199254740993')).toBe('9007199254740994');
  });
});
