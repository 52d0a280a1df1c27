import { describe, expect, it } from 'vitest';
import { DegradedBuffer } from './degraded-buffer';
import type { DegradedEntry } from './degraded-entry';

const entry = (n: number): DegradedEntry => ({
  decisionId: `D${n}`,
  shard: n % 3,
  outbox: `tally:v1:{s${n % 3}}:outbox`,
  payload: '{}',
  timeMs: n,
});
const ids = (entries: readonly DegradedEntry[]) => entries.map((e) => e.decisionId);

describe(DegradedBuffer.name, () => {
  it('keeps entries in arrival order', () => {
    const sut = new DegradedBuffer(10);
    for (let n = 1; n <= 4; n++) sut.push(entry(n));
    expect(sut.size).toBe(4);
    expect(ids(sut.head(3))).toEqual(['D1', 'D2', 'D3']);
    expect(ids(sut.head(100))).toEqual(['D1', 'D2', 'D3', 'D4']);
  });

  it('refuses entries beyond its capacity, keeping the older ones', () => {
    const sut = new DegradedBuffer(2);
    expect([sut.push(entry(1)), sut.push(entry(2)), sut.push(entry(3))]).toEqual([true, true, false]);
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
    expect(ids(sut.head(10))).toEqual(['D2', 'D4', 'D5']);
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

  it('drains through many batches, across compactions, in order and exactly once', () => {
    const sut = new DegradedBuffer(5_000);
    for (let n = 0; n < 5_000; n++) sut.push(entry(n));
    const appended: string[] = [];
    let round = 0;
    while (sut.size > 0) {
      const batch = sut.head(300);
      // every other round trip loses the acknowledgement of its last entry, which is retried first
      const acked = new Set(round++ % 2 === 0 ? batch.slice(0, -1) : batch);
      sut.settle(batch, acked);
      appended.push(...ids(batch.filter((e) => acked.has(e))));
    }
    expect(appended).toEqual(Array.from({ length: 5_000 }, (_, n) => `D${n}`));
  });

  it('rejects a capacity below one', () => {
    expect(() => new DegradedBuffer(0)).toThrow(/capacity/);
  });
});
