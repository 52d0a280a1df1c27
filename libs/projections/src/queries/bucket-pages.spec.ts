import { describe, expect, it } from 'vitest';
import { bucketPage, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, parsePageSize } from './bucket-pages';
import { encodeCursor } from './cursor';
import type { BucketRange } from './time-range';

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();
const HOURS: BucketRange = {
  granularity: 'hour',
  fromMs: ms('2026-11-30T00:00:00Z'),
  toMs: ms('2026-11-30T05:00:00Z'),
};

describe(bucketPage.name, () => {
  it('pages through every bucket exactly once, following the cursors', () => {
    // given a 5-hour range and pages of 2
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const sut = bucketPage(HOURS, {
        pageSize: 2,
        scope: 'acme|p',
        ...(cursor === undefined ? {} : { cursor }),
      });
      if (!sut.ok) throw new Error(JSON.stringify(sut.errors));
      pages.push(sut.value.starts.map(iso));
      cursor = sut.value.nextCursor ?? undefined;
    } while (cursor !== undefined);
    // then 2 + 2 + 1 buckets, the last page without a cursor
    expect(pages).toEqual([
      ['2026-11-30T00:00:00.000Z', '2026-11-30T01:00:00.000Z'],
      ['2026-11-30T02:00:00.000Z', '2026-11-30T03:00:00.000Z'],
      ['2026-11-30T04:00:00.000Z'],
    ]);
  });

  it('has no cursor when the page ends exactly at the end of the range', () => {
    const sut = bucketPage(HOURS, { pageSize: 5 });
    expect(sut.ok && sut.value.nextCursor).toBeNull();
  });

  it('steps calendar months across a year end and through February', () => {
    const range: BucketRange = {
      granularity: 'month',
      fromMs: ms('2023-11-01T00:00:00Z'),
      toMs: ms('2024-04-01T00:00:00Z'),
    };
    const sut = bucketPage(range, { pageSize: 10 });
    expect(sut.ok && sut.value.starts.map(iso)).toEqual([
      '2023-11-01T00:00:00.000Z',
      '2023-12-01T00:00:00.000Z',
      '2024-01-01T00:00:00.000Z',
      '2024-02-01T00:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
    ]);
  });

  it('refuses a cursor of another query (scope, granularity or range)', () => {
    const first = bucketPage(HOURS, { pageSize: 2, scope: 'acme|p' });
    const cursor = (first.ok && first.value.nextCursor) || '';
    const refused = { ok: false, errors: [{ field: 'cursor', message: 'cursor belongs to another query' }] };
    expect(bucketPage(HOURS, { pageSize: 2, scope: 'other|p', cursor })).toEqual(refused);
    expect(
      bucketPage({ ...HOURS, toMs: HOURS.toMs + 3_600_000 }, { pageSize: 2, scope: 'acme|p', cursor }),
    ).toEqual(refused);
    expect(bucketPage({ ...HOURS, granularity: 'minute' }, { pageSize: 2, scope: 'acme|p', cursor })).toEqual(
      refused,
    );
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['base64 of a non-object', Buffer.from('[1]').toString('base64url')],
    [
      'a position outside the range',
      encodeCursor({ g: 'hour', f: HOURS.fromMs, t: HOURS.toMs, s: '', n: HOURS.toMs }),
    ],
    [
      'a position that is no number',
      encodeCursor({ g: 'hour', f: HOURS.fromMs, t: HOURS.toMs, s: '', n: '3' }),
    ],
  ])('refuses %s', (_, cursor) => {
    expect(bucketPage(HOURS, { pageSize: 2, cursor })).toEqual({
      ok: false,
      errors: [{ field: 'cursor', message: 'cursor is not valid' }],
    });
  });
});

describe(parsePageSize.name, () => {
  it.each([
    [undefined, DEFAULT_PAGE_SIZE],
    ['1', 1],
    [String(MAX_PAGE_SIZE), MAX_PAGE_SIZE],
  ])('accepts %j as %s', (text, expected) => {
    expect(parsePageSize(text)).toEqual({ ok: true, value: expected });
  });

  it.each(['0', String(MAX_PAGE_SIZE + 1), '-1', '1.5', 'ten', '', '1e3'])('refuses %j', (text) => {
    expect(parsePageSize(text).ok).toBe(false);
  });
});
