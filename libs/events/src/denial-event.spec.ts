import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { ULID_PATTERN } from './event-parts.v1';
import { coalescedDenialId, denialEvent, type CoalescedDenial } from './denial-event';
import { parseDecisionEvent, parseDecisionV2Event } from './event-parsers';
import { OutboxEntryError, type OutboxPayload } from './outbox/outbox-payload';

const SECOND = 1_796_029_200; // 2026-11-30T09:00:00Z

const payload: OutboxPayload = {
  v: 1,
  id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
  policy_set_version: 'sha256:abc',
  tenant: 'acme',
  selectors: { tenant: 'acme', principal: 'svc-42' },
  attributes: {},
  cost: 5,
  outcome: 'allowed',
  policies: [
    { name: 'notary', mode: 'enforce', key: 'svc-42', windows: [{ name: 'b', role: 'burst', limit: 10 }] },
  ],
};

const denial: CoalescedDenial = {
  shard: 7,
  second: SECOND,
  field: 'notary|svc-42|burst_quota_exhausted',
  count: 42,
  p: JSON.stringify(payload),
  reason: 'burst_quota_exhausted',
};

describe(coalescedDenialId.name, () => {
  it('is a ULID whose time part is the second', () => {
    const sut = coalescedDenialId(7, SECOND, 'f');
    expect(sut).toMatch(ULID_PATTERN);
    expect(decodeTime(sut)).toBe(SECOND * 1000);
  });

  it('is the same on re-emission and differs when shard, second or field differ', () => {
    const sut = coalescedDenialId(7, SECOND, 'f');
    expect(coalescedDenialId(7, SECOND, 'f')).toBe(sut);
    expect(
      new Set([
        sut,
        coalescedDenialId(8, SECOND, 'f'),
        coalescedDenialId(7, SECOND + 1, 'f'),
        coalescedDenialId(7, SECOND, 'g'),
      ]).size,
    ).toBe(4);
  });

  it('pins the derivation (a change would break dedup across relay versions)', () => {
    expect(coalescedDenialId(0, 0, '').slice(0, 10)).toBe('0000000000');
    expect(coalescedDenialId(7, SECOND, 'notary|svc-42')).toBe('01M8NTXDM0ZPKS0TZ0T05WM9SH');
  });
});

describe(denialEvent.name, () => {
  it('stands for count denials at the start of the second, whatever the payload outcome said', () => {
    const sut = denialEvent(denial);
    expect(sut.id).toBe(coalescedDenialId(7, SECOND, denial.field));
    expect(sut.time).toBe('2026-11-30T09:00:00.000Z');
    expect(sut.subject).toBe('notary/svc-42');
    expect(sut.data).toMatchObject({
      outcome: 'denied',
      reason: 'burst_quota_exhausted',
      count: 42,
      cost: 5,
    });
    expect(sut.data.policies[0]?.windows[0]).toEqual({ name: 'b', role: 'burst', limit: 10 });
  });

  it('is valid for the consumer', () => {
    const sut = denialEvent(denial);
    expect(parseDecisionV2Event(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
    // and its data is valid v1 data: a consumer of the first contract reads it as a v1 denial
    const asV1 = { ...sut, type: 'tally.decision.v1' };
    expect(parseDecisionEvent(JSON.stringify(asV1))).toEqual({ ok: true, event: asV1 });
  });

  it('uses window results when given', () => {
    const sut = denialEvent({ ...denial, r: '[{"remaining":0,"reset_ms":400,"would_deny":true}]' });
    expect(sut.data.policies[0]?.windows[0]).toMatchObject({ remaining: 0, reset_ms: 400, would_deny: true });
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses count %s', (count) => {
    expect(() => denialEvent({ ...denial, count })).toThrow(OutboxEntryError);
  });

  it('refuses a fractional second', () => {
    expect(() => denialEvent({ ...denial, second: 1.5 })).toThrow('denial second must be epoch seconds');
  });
});
