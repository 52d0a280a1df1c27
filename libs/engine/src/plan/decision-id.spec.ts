import { decodeTime, isValid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { newDecisionId, pooledRandom } from './decision-id';

describe(newDecisionId.name, () => {
  it('mints valid ULIDs stamped with the current time', () => {
    const before = Date.now();
    const sut = newDecisionId();
    const after = Date.now();

    expect(isValid(sut)).toBe(true);
    expect(decodeTime(sut)).toBeGreaterThanOrEqual(before);
    expect(decodeTime(sut)).toBeLessThanOrEqual(after);
  });

  it('mints distinct, strictly increasing ids across several refills of the random pool', () => {
    // most of them share a millisecond with the previous one (incremented), some start a new one
    const ids = Array.from({ length: 20_000 }, () => newDecisionId());

    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
  });
});

describe(pooledRandom.name, () => {
  it('draws every byte value, as a fraction below 1, across refills of the pool', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 20_000; i++) {
      const sut = pooledRandom();
      expect(sut).toBeGreaterThanOrEqual(0);
      expect(sut).toBeLessThan(1);
      seen.add(sut * 256);
    }

    // a stuck or biased source would miss byte values; every value is a whole byte
    expect(seen.size).toBe(256);
    expect([...seen].every((b) => Number.isInteger(b))).toBe(true);
  });
});
