import { describe, expect, it } from 'vitest';
import { DegradedBuffer } from './degraded-buffer';
import type { DegradedEntry } from './degraded-entry';

/** Entry `D<n>` of shard `shard` (0 unless given). */
const entry = (n: number, shard = 0): DegradedEntry => ({
  decisionId: `D${n}`,
  shard,
  outbox: `tally:v1:{s${shard}}:outbox`,
  marker: `tally:v1:{s${shard}}:degraded:D${n}`,
  payload: '{}',
  timeMs: n,
});
const ids = (entries: readonly DegradedEntry[]) => entries.map((e) => e.decisionId);

describe(DegradedBuffer.name, () => {
  it('keeps one shard’s entries in arrival order', () => {
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 4; n++) sut.push(entry(n));
    expect(sut.size).toBe(4);
    expect(ids(sut.head(3))).toEqual(['D1', 'D2', 'D3']);
    expect(ids(sut.head(100))).toEqual(['D1', 'D2', 'D3', 'D4']);
  });

  it('takes the shards in turn, so one shard’s backlog does not fill a batch', () => {
    // given shard 0 with a backlog of five and shards 1 and 2 with one entry each
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 5; n++) sut.push(entry(n, 0));
    sut.push(entry(6, 1));
    sut.push(entry(7, 2));
    // then a batch of four holds every shard's oldest before shard 0's second
    expect(ids(sut.head(4))).toEqual(['D1', 'D6', 'D7', 'D2']);
    expect(ids(sut.head(100))).toEqual(['D1', 'D6', 'D7', 'D2', 'D3', 'D4', 'D5']);
  });

  it('leaves out the shards it is told to skip (those that failed in this flush)', () => {
    const sut = new DegradedBuffer(10);
    sut.push(entry(1, 0));
    sut.push(entry(2, 1));
    sut.push(entry(3, 0));
    sut.push(entry(4, 2));
    expect(ids(sut.head(10, new Set([0])))).toEqual(['D2', 'D4']);
    expect(ids(sut.head(10, new Set([0, 1, 2])))).toEqual([]);
  });

  it('refuses entries beyond its capacity, over all shards, keeping the older ones', () => {
    const sut = new DegradedBuffer(2);
    expect([sut.push(entry(1, 0)), sut.push(entry(2, 1)), sut.push(entry(3, 2))]).toEqual([
      true,
      true,
      false,
    ]);
    expect(ids(sut.head(10))).toEqual(['D1', 'D2']);
  });

  it('removes nothing until a batch is settled, and only the acknowledged entries', () => {
    // given a batch of four taken from the head
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 5; n++) sut.push(entry(n));
    const batch = sut.head(4);
    expect(sut.size).toBe(5);
    // when Redis acknowledged only the first and the third
    const removed = sut.settle(batch, new Set([batch[0], batch[2]]));
    // then the others stay at the front, in order, before the untouched tail
    expect(removed).toBe(2);
    expect(sut.size).toBe(3);
    expect(ids(sut.head(10))).toEqual(['D2', 'D4', 'D5']);
  });

  it('removes what a healthy shard acknowledged and keeps the failed shard’s part only', () => {
    // given entries of three shards in one batch
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 6; n++) sut.push(entry(n, n % 3));
    const batch = sut.head(10);
    // when shard 1 timed out and shards 0 and 2 acknowledged all of theirs
    const removed = sut.settle(batch, new Set(batch.filter((e) => e.shard !== 1)));
    // then only shard 1's entries are still owed, in their order
    expect(removed).toBe(4);
    expect(ids(sut.head(10))).toEqual(['D1', 'D4']);
    expect(sut.head(10).every((e) => e.shard === 1)).toBe(true);
  });

  it('keeps a batch whole when nothing was acknowledged', () => {
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 3; n++) sut.push(entry(n));
    expect(sut.settle(sut.head(2), new Set())).toBe(0);
    expect(ids(sut.head(10))).toEqual(['D1', 'D2', 'D3']);
  });

  it('accepts pushes while a batch is out and settles around them', () => {
    const sut = new DegradedBuffer(3);
    sut.push(entry(1));
    sut.push(entry(2));
    const batch = sut.head(2);
    sut.push(entry(3));
    expect(sut.push(entry(4))).toBe(false);
    sut.settle(batch, new Set(batch));
    expect(ids(sut.head(10))).toEqual(['D3']);
    // capacity counts what is still held, so room came back
    expect(sut.push(entry(5))).toBe(true);
    expect(ids(sut.head(10))).toEqual(['D3', 'D5']);
  });

  it('refuses to settle a batch that is not its head', () => {
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 3; n++) sut.push(entry(n));
    const stale = sut.head(1);
    sut.settle(stale, new Set(stale));
    expect(() => sut.settle(stale, new Set(stale))).toThrow(/not the head/);
    expect(sut.size).toBe(2);
  });

  it('drains through many batches, across compactions, in order per shard and exactly once', () => {
    const sut = new DegradedBuffer(5_000);
    for (let n = 0; n < 5_000; n++) sut.push(entry(n, n % 4));
    const appended: DegradedEntry[] = [];
    let round = 0;
    while (sut.size > 0) {
      const batch = sut.head(300);
      // every other round trip, shard (round mod 4) fails as a whole and is retried first next time
      const failing = round % 2 === 0 ? round % 4 : -1;
      round++;
      const acked = new Set(batch.filter((e) => e.shard !== failing));
      sut.settle(batch, acked);
      appended.push(...batch.filter((e) => acked.has(e)));
    }
    expect(appended).toHaveLength(5_000);
    expect(new Set(ids(appended)).size).toBe(5_000);
    for (let shard = 0; shard < 4; shard++) {
      const own = appended.filter((e) => e.shard === shard).map((e) => e.timeMs);
      expect(own).toEqual([...own].sort((a, b) => a - b));
    }
  });

  it('rejects a capacity below one', () => {
    expect(() => new DegradedBuffer(0)).toThrow(/capacity/);
  });
});
