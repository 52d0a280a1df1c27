import { describe, expect, it } from 'vitest';
import { DEFAULT_TOP_KEYS_LIMIT, MAX_TOP_KEYS_LIMIT, parseTopKeysQuery } from './top-keys-query';

const NOW = Date.parse('2026-11-30T09:41:27.500Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe(parseTopKeysQuery.name, () => {
  it('defaults to the day bucket containing now, and 10 keys', () => {
    const sut = parseTopKeysQuery({}, NOW);
    expect(sut.ok && { ...sut.value, startMs: iso(sut.value.startMs) }).toEqual({
      granularity: 'day',
      startMs: '2026-11-30T00:00:00.000Z',
      limit: DEFAULT_TOP_KEYS_LIMIT,
    });
    expect(DEFAULT_TOP_KEYS_LIMIT).toBe(10);
  });

  it.each([
    ['minute', '2026-11-30T09:41:00.000Z'],
    ['hour', '2026-11-30T09:00:00.000Z'],
    ['day', '2026-11-30T00:00:00.000Z'],
    ['month', '2026-11-01T00:00:00.000Z'],
  ])('reads the %s bucket that contains `at`', (granularity, start) => {
    const sut = parseTopKeysQuery({ granularity, at: '2026-11-30T10:41:27+01:00', limit: '1000' }, 0);
    expect(sut.ok && { ...sut.value, startMs: iso(sut.value.startMs) }).toEqual({
      granularity,
      startMs: start,
      limit: 1000,
    });
  });

  it('takes `at` in its zone: late evening west of UTC is the next UTC day', () => {
    const sut = parseTopKeysQuery({ at: '2026-11-30T22:30:00-05:00' }, NOW);
    expect(sut.ok && iso(sut.value.startMs)).toBe('2026-12-01T00:00:00.000Z');
  });

  it('lists every problem at once, each with its field', () => {
    const sut = parseTopKeysQuery({ granularity: 'week', at: '2026-11-30T09:00:00', limit: '0' }, NOW);
    expect(sut).toEqual({
      ok: false,
      errors: [
        { field: 'granularity', message: 'granularity must be one of minute, hour, day, month' },
        { field: 'at', message: 'at must be an ISO 8601 time with a zone' },
        { field: 'limit', message: `limit must be an integer from 1 to ${MAX_TOP_KEYS_LIMIT}` },
      ],
    });
  });

  it.each(['0', '1001', '-1', '1.5', 'ten', '', '0010000'])('refuses limit %j', (limit) => {
    const sut = parseTopKeysQuery({ limit }, NOW);
    expect(sut.ok ? [] : sut.errors.map((e) => e.field)).toEqual(['limit']);
  });

  it.each(['1', '10', '999', '1000', '007'])('accepts limit %j', (limit) => {
    const sut = parseTopKeysQuery({ limit }, NOW);
    expect(sut.ok && sut.value.limit).toBe(Number(limit));
  });

  it('refuses an instant before 1970 and an impossible date', () => {
    for (const at of ['1969-12-31T23:59:00Z', '2026-02-30']) {
      const sut = parseTopKeysQuery({ at }, NOW);
      expect(sut.ok ? [] : sut.errors.map((e) => e.field)).toEqual(['at']);
    }
  });
});
