import { describe, expect, it } from 'vitest';
import { compareKeyUsage, TopKeys, type KeyUsage } from './top-keys';

const use = (key: string, cost: number, count: number): KeyUsage => ({ key, cost, count });

function select(limit: number, entries: readonly KeyUsage[]): KeyUsage[] {
  const sut = new TopKeys(limit);
  for (const entry of entries) sut.offer(entry);
  return sut.ranked();
}

/** A small seeded generator: the same "random" streams on every run. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe(compareKeyUsage.name, () => {
  it('ranks by cost, then count, then key ascending', () => {
    const sorted = [use('b', 5, 1), use('a', 5, 1), use('z', 9, 0), use('c', 5, 3), use('a', 1, 9)].sort(
      compareKeyUsage,
    );
    expect(sorted).toEqual([use('z', 9, 0), use('c', 5, 3), use('a', 5, 1), use('b', 5, 1), use('a', 1, 9)]);
  });
});

describe(TopKeys.name, () => {
  it('keeps the heaviest by cost, breaking ties by count and then by key, whatever the arrival order', () => {
    // given ties on cost (k2/k3/k4) and on cost and count (k3/k4), offered in an unhelpful order
    const entries = [
      use('k4', 10, 2),
      use('k1', 1, 50),
      use('k3', 10, 2),
      use('k5', 20, 1),
      use('k2', 10, 7),
    ];
    // when only three are kept
    const sut = select(3, entries);
    // then the heaviest cost first, then the larger count, then the smaller key
    expect(sut).toEqual([use('k5', 20, 1), use('k2', 10, 7), use('k3', 10, 2)]);
    expect(select(3, [...entries].reverse())).toEqual(sut);
  });

  it('lists a key offered twice once, with its later value (HSCAN may return a field twice)', () => {
    // given k1 read twice: lightest at first, heaviest the second time (the projector wrote in between)
    const sut = select(3, [use('k1', 1, 1), use('k2', 5, 5), use('k3', 3, 3), use('k1', 9, 9)]);
    expect(sut).toEqual([use('k1', 9, 9), use('k2', 5, 5), use('k3', 3, 3)]);
    // and a repeat with the same value changes nothing
    expect(select(2, [use('a', 2, 2), use('a', 2, 2), use('b', 1, 1)])).toEqual([
      use('a', 2, 2),
      use('b', 1, 1),
    ]);
  });

  it('lists a key evicted and offered again at most once', () => {
    // given a full selection of 2 that evicts 'low', then 'low' comes back (a repeat of HSCAN)
    const sut = select(2, [use('low', 1, 1), use('mid', 2, 2), use('top', 3, 3), use('low', 1, 1)]);
    expect(sut).toEqual([use('top', 3, 3), use('mid', 2, 2)]);
    // when it comes back heavier than the worst kept, it re-enters, once
    const again = select(2, [use('low', 1, 1), use('mid', 2, 2), use('top', 3, 3), use('low', 5, 1)]);
    expect(again).toEqual([use('low', 5, 1), use('top', 3, 3)]);
  });

  it('lists the whole set, ranked, when the limit is larger than the set', () => {
    expect(select(1000, [use('b', 1, 1), use('a', 1, 1), use('c', 2, 0)])).toEqual([
      use('c', 2, 0),
      use('a', 1, 1),
      use('b', 1, 1),
    ]);
  });

  it('lists nothing for an empty hash', () => {
    expect(select(10, [])).toEqual([]);
  });

  it('keeps one entry with limit 1: the heaviest', () => {
    expect(select(1, [use('a', 1, 1), use('b', 3, 1), use('c', 2, 1), use('b', 4, 1)])).toEqual([
      use('b', 4, 1),
    ]);
  });

  it('agrees with a full sort on long streams with ties and repeats', () => {
    const random = lcg(42);
    for (const limit of [1, 7, 100]) {
      // given 5000 reads of 2000 keys with few distinct costs (many ties) and repeats, values growing
      const latest = new Map<string, KeyUsage>();
      const stream: KeyUsage[] = [];
      for (let i = 0; i < 5000; i++) {
        const key = `k${Math.floor(random() * 2000)}`;
        const before = latest.get(key);
        const entry = use(
          key,
          (before?.cost ?? 0) + Math.floor(random() * 4),
          (before?.count ?? 0) + Math.floor(random() * 3),
        );
        latest.set(key, entry);
        stream.push(entry);
      }
      // then the selection is the top of the latest value of every key
      const expected = [...latest.values()].sort(compareKeyUsage).slice(0, limit);
      expect(select(limit, stream)).toEqual(expected);
    }
  });

  it('refuses a limit below 1', () => {
    expect(() => new TopKeys(0)).toThrow(RangeError);
    expect(() => new TopKeys(1.5)).toThrow(RangeError);
  });
});
