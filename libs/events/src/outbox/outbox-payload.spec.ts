import { describe, expect, it } from 'vitest';
import { decodeOutboxEntry, OutboxEntryError, type OutboxPayload } from './outbox-payload';

const payload: OutboxPayload = {
  v: 1,
  id: '01JD0000000000000000000000',
  policy_set_version: 'v1',
  selectors: { principal: 'svc-42' },
  attributes: {},
  cost: 1,
  outcome: 'allowed',
  policies: [
    {
      name: 'p',
      mode: 'enforce',
      key: 'svc-42',
      windows: [
        { name: 'burst', role: 'burst', limit: 10 },
        { name: 'sustained', role: 'sustained', limit: 100 },
      ],
    },
  ],
};
const result = { remaining: 1, reset_ms: 2, would_deny: false };

describe(decodeOutboxEntry.name, () => {
  it('decodes payload, time and one result per window', () => {
    const sut = decodeOutboxEntry({
      p: JSON.stringify(payload),
      t: '1700000000123',
      r: JSON.stringify([result, result]),
    });
    expect(sut).toEqual({ payload, timeMs: 1_700_000_000_123, results: [result, result] });
  });

  it.each([undefined, '', '{}', '[]'])('reads r=%j as no results (Lua encodes an empty table as {})', (r) => {
    expect(decodeOutboxEntry({ p: JSON.stringify(payload), t: '1', r }).results).toEqual([]);
  });

  it.each([
    [{ p: 'nope', t: '1', r: '[]' }, 'p is not JSON'],
    [{ p: '[1]', t: '1', r: '[]' }, 'p is not a JSON object'],
    [{ p: JSON.stringify({ ...payload, v: 2 }), t: '1', r: '[]' }, 'unknown payload version 2'],
    [{ p: JSON.stringify({ ...payload, id: '' }), t: '1', r: '[]' }, 'p.id is missing'],
    [{ p: JSON.stringify({ ...payload, cost: '3' }), t: '1', r: '[]' }, 'p.cost is not a number'],
    [{ p: JSON.stringify({ ...payload, policies: {} }), t: '1', r: '[]' }, 'p.policies is not an array'],
    [
      { p: JSON.stringify({ ...payload, policies: [{ name: 'x' }] }), t: '1', r: '[]' },
      'p.policies[0] needs',
    ],
    [{ p: JSON.stringify(payload), t: '17e11', r: '[]' }, 't is not epoch milliseconds: 17e11'],
    [{ p: JSON.stringify(payload), t: '-1', r: '[]' }, 't is not epoch milliseconds'],
    [{ p: JSON.stringify(payload), t: '1', r: '{"a":1}' }, 'r is not a JSON array'],
    [{ p: JSON.stringify(payload), t: '1', r: JSON.stringify([result]) }, 'r has 1 results for 2 windows'],
    [{ p: JSON.stringify(payload), t: '1', r: '[{"remaining":1},{}]' }, 'r[0] needs remaining and reset_ms'],
  ])('rejects %j: %s', (entry, reason) => {
    expect(() => decodeOutboxEntry(entry)).toThrow(OutboxEntryError);
    expect(() => decodeOutboxEntry(entry)).toThrow(reason);
  });
});
