import { describe, expect, it } from 'vitest';
import { parseLedgerEvent, parseOverrideEvent } from './event-parsers';
import { overrideEventFromOutbox } from './override-event';
import { decodeStoredOverride, overrideHeadJson, type OverrideHead } from './outbox/override-payload';

const ID = '01JD5Z8M3KQ7W4X9T2B6N0R1CA';
const HEAD: OverrideHead = {
  v: 1,
  id: ID,
  action: 'set',
  policy: 'tenant-default',
  key: 'acme',
  tenant: 'acme',
  set_by: 'ops',
  reason: 'launch',
};
const BEFORE = '3;;hourly=100\n{"reason":"pilot","set_by":"ops","updated_at":1764493200000}';
const AFTER =
  '7;1764579600000;hourly=500,daily=0\n{"reason":"launch","set_by":"ops","updated_at":1764493260000}';

describe(overrideEventFromOutbox.name, () => {
  it('makes a valid tally.override.v1 event of a set entry, before and after decoded', () => {
    const sut = overrideEventFromOutbox({
      o: overrideHeadJson(HEAD),
      b: BEFORE,
      a: AFTER,
      n: '7',
      t: '1764493260000',
    });

    expect(sut).toEqual({
      specversion: '1.0',
      id: ID,
      source: 'tally/decision-api',
      type: 'tally.override.v1',
      time: '2025-11-30T09:01:00.000Z',
      subject: 'tenant-default/acme',
      datacontenttype: 'application/json',
      data: {
        policy: 'tenant-default',
        key: 'acme',
        tenant: 'acme',
        action: 'set',
        before: {
          version: 3,
          limits: { hourly: 100 },
          reason: 'pilot',
          set_by: 'ops',
          updated_at: '2025-11-30T09:00:00.000Z',
        },
        after: {
          version: 7,
          limits: { hourly: 500, daily: 0 },
          expires_at: '2025-12-01T09:00:00.000Z',
          reason: 'launch',
          set_by: 'ops',
          updated_at: '2025-11-30T09:01:00.000Z',
        },
        set_by: 'ops',
        reason: 'launch',
        version: 7,
      },
    });
    expect(parseOverrideEvent(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
    expect(parseLedgerEvent(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
  });

  it('omits after on a removal and before on a first set', () => {
    const removed = overrideEventFromOutbox({
      o: overrideHeadJson({ ...HEAD, action: 'remove', reason: '' }),
      b: AFTER,
      a: '',
      n: '8',
      t: '1764493270000',
    });
    expect(removed.data).not.toHaveProperty('after');
    expect(removed.data).toMatchObject({ action: 'remove', version: 8, before: { version: 7 } });
    expect(parseOverrideEvent(JSON.stringify(removed)).ok).toBe(true);

    const first = overrideEventFromOutbox({ o: overrideHeadJson(HEAD), b: '', a: AFTER, n: '7', t: '1' });
    expect(first.data).not.toHaveProperty('before');
  });

  it.each([
    [{ o: '{nope' }, /o is not JSON/],
    [{ o: overrideHeadJson({ ...HEAD, v: 2 as 1 }) }, /unknown override head version 2/],
    [{ o: JSON.stringify({ ...HEAD, action: 'drop' }) }, /o.action/],
    [{ a: 'garbage' }, /a is not a stored override/],
    [{ n: 'x' }, /n is not a version/],
    [{ t: '' }, /t is not epoch milliseconds/],
  ])('refuses a malformed entry (%j)', (over, reason) => {
    const entry = { o: overrideHeadJson(HEAD), b: '', a: AFTER, n: '7', t: '1', ...over };
    expect(() => overrideEventFromOutbox(entry)).toThrow(reason);
  });
});

describe('parseOverrideEvent', () => {
  it('rejects a decision event and a change with a negative limit, naming the field', () => {
    const event = overrideEventFromOutbox({ o: overrideHeadJson(HEAD), b: '', a: AFTER, n: '7', t: '1' });
    expect(parseOverrideEvent(JSON.stringify({ ...event, type: 'tally.decision.v1' }))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('expected tally.override.v1') as unknown,
    });
    const bad = { ...event, data: { ...event.data, after: { ...event.data.after, limits: { hourly: -1 } } } };
    expect(parseOverrideEvent(JSON.stringify(bad))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('data.after.limits') as unknown,
    });
  });
});

describe(decodeStoredOverride.name, () => {
  it('reads the stored value the write script keeps, and nothing else', () => {
    expect(decodeStoredOverride(BEFORE)).toEqual({
      version: 3,
      expiresAtMs: null,
      limits: { hourly: 100 },
      reason: 'pilot',
      setBy: 'ops',
      updatedAtMs: 1764493200000,
    });
    expect(decodeStoredOverride('3;;hourly=1')).toBeNull();
  });
});
