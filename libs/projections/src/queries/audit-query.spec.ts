import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIT_LIMIT, nextAuditCursor, parseAuditQuery } from './audit-query';
import { encodeCursor } from './cursor';

const NOW = Date.parse('2026-11-30T09:00:00Z');
const SINCE = Date.parse('2026-11-30T08:00:00Z');

describe(parseAuditQuery.name, () => {
  it('defaults to the last 24 hours and the default limit', () => {
    expect(parseAuditQuery({}, NOW)).toEqual({
      ok: true,
      value: {
        sinceMs: NOW - 86_400_000,
        limit: DEFAULT_AUDIT_LIMIT,
        position: { scoreMs: NOW - 86_400_000, skip: 0 },
      },
    });
  });

  it('lists every invalid parameter', () => {
    expect(parseAuditQuery({ since: 'today', limit: '0', cursor: '!!' }, NOW)).toEqual({
      ok: false,
      errors: [
        { field: 'since', message: 'since must be an ISO 8601 time with a zone' },
        { field: 'limit', message: 'limit must be an integer from 1 to 1000' },
        { field: 'cursor', message: 'cursor is not valid for this query' },
      ],
    });
  });

  it('keeps the default since of the first page on later pages, as the clock moves on', () => {
    // given a first page without since, read at NOW, and the next page asked for a minute later
    const first = parseAuditQuery({ limit: '2' }, NOW);
    if (!first.ok) throw new Error('invalid');
    const cursor = nextAuditCursor(first.value, [NOW - 5000, NOW - 4000]) ?? '';
    const sut = parseAuditQuery({ limit: '2', cursor }, NOW + 60_000);
    // then the cursor is accepted and still anchored at the first page's since
    expect(sut).toEqual({
      ok: true,
      value: { sinceMs: NOW - 86_400_000, limit: 2, position: { scoreMs: NOW - 4000, skip: 1 } },
    });
  });

  it('refuses a cursor made for another since', () => {
    const cursor = encodeCursor({ a: SINCE - 1, p: SINCE, k: 0 });
    expect(parseAuditQuery({ since: '2026-11-30T08:00:00Z', cursor }, NOW).ok).toBe(false);
  });
});

describe(nextAuditCursor.name, () => {
  it('resumes after the rows already returned, also among rows sharing a time', () => {
    // given rows at scores 1,2,2 | 2,2,2 | 2,3 and pages of 3
    const first = parseAuditQuery({ since: '2026-11-30T08:00:00Z', limit: '3' }, NOW);
    if (!first.ok) throw new Error('invalid');
    const c1 = nextAuditCursor(first.value, [SINCE + 1, SINCE + 2, SINCE + 2]);
    const second = parseAuditQuery({ since: '2026-11-30T08:00:00Z', limit: '3', cursor: c1 ?? '' }, NOW);
    // then the second page starts at score 2 skipping the two rows of score 2 already seen
    expect(second.ok && second.value.position).toEqual({ scoreMs: SINCE + 2, skip: 2 });
    if (!second.ok) throw new Error('invalid');
    const c2 = nextAuditCursor(second.value, [SINCE + 2, SINCE + 2, SINCE + 2]);
    const third = parseAuditQuery({ since: '2026-11-30T08:00:00Z', limit: '3', cursor: c2 ?? '' }, NOW);
    expect(third.ok && third.value.position).toEqual({ scoreMs: SINCE + 2, skip: 5 });
  });

  it('is null after a page that was not full', () => {
    const query = parseAuditQuery({ limit: '3' }, NOW);
    expect(query.ok && nextAuditCursor(query.value, [1, 2])).toBeNull();
  });
});
