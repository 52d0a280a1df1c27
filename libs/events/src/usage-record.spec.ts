import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kafkaKeyOf, ledgerEventFromOutbox } from './event-builders';
import { OutboxEntryError } from './outbox/outbox-payload';
import { payloadJson, type PayloadParts } from './outbox/payload-json';
import { degradedPayload } from './outbox/payload-prefix';
import { usageRecordFromOutbox } from './usage-record';

/** What the reference builder makes of an entry: the record, or the error the relay dead-letters. */
function reference(p: string, t: string, r: string): { key: string; value: string } | 'dead-letter' {
  try {
    const event = ledgerEventFromOutbox({ p, t, r });
    return { key: kafkaKeyOf(event), value: JSON.stringify(event) };
  } catch (error) {
    if (error instanceof OutboxEntryError) return 'dead-letter';
    throw error;
  }
}

/** Text with what JSON escapes, multi-byte characters, surrogate pairs and lone surrogates. */
const text = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 8 }), weight: 1 },
  fc.constantFrom(
    '"',
    '\\',
    '\n',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u2028',
    'é',
    '😀',
    '\ud800',
    '\udc00',
    '/',
  ),
);
const name = fc.oneof(fc.constantFrom('burst', 'day', 'notary/x'), text);
const rareKey = fc.constantFrom('0', '12', '__proto__', 'tenant');
const record = fc.dictionary(
  fc.oneof({ arbitrary: text, weight: 9 }, { arbitrary: rareKey, weight: 1 }),
  text,
  {
    maxKeys: 4,
  },
);
const window = fc.record({
  name,
  role: fc.constantFrom('burst', 'sustained'),
  limit: fc.oneof(fc.integer({ min: 1, max: 1e9 }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(0)),
});
const policy = fc.record({
  name,
  mode: fc.constantFrom('enforce', 'shadow'),
  windows: fc.array(window, { maxLength: 3 }),
  key: text,
});
const result = fc.record(
  {
    remaining: fc.oneof(fc.integer({ min: 0, max: 1e12 }), fc.double({ noNaN: true, min: 0 })),
    reset_ms: fc.oneof(fc.integer({ min: 0, max: 1e9 }), fc.double({ noNaN: true, min: 0 })),
    would_deny: fc.boolean(),
    override: fc.integer({ min: 1, max: 1e6 }),
    limit: fc.integer({ min: 0, max: 1e6 }),
  },
  { requiredKeys: ['remaining', 'reset_ms'] },
);
const traceparent = fc.constantFrom(
  '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01', // the pattern refuses upper case
  'not-a-traceparent',
);

/** An entry as the engine writes it: `payloadJson` of generated parts, a time, one result per window. */
const entry = fc
  .record(
    {
      id: fc.oneof(fc.constant('01JD5Z8M3KQ7W4X9T2B6N0R1CE'), text),
      policy_set_version: text,
      tenant: text,
      selectors: record,
      attributes: record,
      cost: fc.oneof(
        { arbitrary: fc.integer({ min: 1, max: 1000 }), weight: 8 },
        fc.constant(Number.MAX_SAFE_INTEGER),
        fc.constant(0),
      ),
      idempotency_key: text,
      policies: fc.array(policy, { maxLength: 3 }),
      traceparent,
      time: fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 4102444800000 }).map(String), weight: 9 },
        fc.constant('9999999999999999'), // 16 digits: past the last date `Date` can hold
      ),
      results: fc.oneof(
        { arbitrary: fc.constant('all'), weight: 6 },
        fc.constantFrom('none', 'degraded', 'one too few'),
      ),
    },
    {
      requiredKeys: [
        'id',
        'policy_set_version',
        'selectors',
        'attributes',
        'cost',
        'policies',
        'time',
        'results',
      ],
    },
  )
  .chain((g) => {
    const windows = g.policies.reduce((n, pol) => n + pol.windows.length, 0);
    return fc.array(result, { minLength: windows, maxLength: windows }).map((results) => {
      const { time, results: shape, policies, ...rest } = g;
      const parts = {
        ...rest,
        policies: policies.map(({ key, ...pol }) => ({ policy: pol, key })),
      } as PayloadParts;
      let p = payloadJson(parts);
      let r = JSON.stringify(shape === 'one too few' ? results.slice(1) : results);
      if (shape === 'none') r = '';
      if (shape === 'degraded') [p, r] = [degradedPayload(p, 'backend_timeout'), '[]'];
      return { p, t: time, r };
    });
  });

describe(usageRecordFromOutbox.name, () => {
  it('gives the reference builder’s bytes and key for every entry the engine writes', () => {
    let answered = 0;
    fc.assert(
      fc.property(entry, ({ p, t, r }) => {
        const sut = usageRecordFromOutbox(p, t, r);
        if (sut !== undefined) answered++;
        if (sut !== undefined) expect(sut).toEqual(reference(p, t, r));
      }),
      { numRuns: 5000 },
    );
    // The generator leans on what the fast path refuses (lone surrogates, index-like keys, cost 0,
    // short results…): about one entry in seven is ordinary, and those the fast path must take.
    expect(answered).toBeGreaterThan(400);
  });

  it('answers for the common entry (plain text, results for every window)', () => {
    // given an allowed entry of ordinary text, as decide.lua appends it
    const p = payloadJson({
      id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
      policy_set_version: 'sha256:abc',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'svc-42' },
      attributes: { principal_class: 'machine', note: 'café "quoted" 😀' },
      cost: 3,
      policies: [
        {
          policy: {
            name: 'notary',
            mode: 'enforce',
            windows: [{ name: 'burst', role: 'burst', limit: 100 }],
          },
          key: 'svc-42',
        },
      ],
    });
    const r = '[{"remaining":97,"reset_ms":30,"would_deny":false}]';
    // when / then: the fast path takes it, with the reference's bytes
    const sut = usageRecordFromOutbox(p, '1796029200123', r);
    expect(sut).toBeDefined();
    expect(sut).toEqual(reference(p, '1796029200123', r));
  });

  it('leaves every mutated entry to the reference builder or matches it', () => {
    const mutated = entry.chain(({ p, t, r }) =>
      fc
        .record({
          at: fc.nat({ max: p.length }),
          cut: fc.nat({ max: 3 }),
          // JSON's other spellings of a string (`\\u0041`, `\\/`, `\\u00e9`, `\\u0008` for `\\b`), raw control
          // characters and lone surrogates, broken structure
          insert: fc.constantFrom(
            ...['', ' ', '"', '\\', '}', ']', ',', '0', '1', ':', '{"a":1}', 'null', '\u0008', '\u001f'],
            ...[
              '\\u0041',
              '\\/',
              '\\u00e9',
              '\\u0008',
              '\\u001F',
              '\\ud800',
              '\ud800',
              '\udc00',
              '\udc00\udc00',
            ],
          ),
        })
        .map(({ at, cut, insert }) => ({ p: p.slice(0, at) + insert + p.slice(at + cut), t, r })),
    );
    fc.assert(
      fc.property(mutated, ({ p, t, r }) => {
        const sut = usageRecordFromOutbox(p, t, r);
        if (sut !== undefined) expect(sut).toEqual(reference(p, t, r));
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ['a denied payload', '{"v":1,"outcome":"denied","reason":"burst_quota_exhausted","id":"x"}'],
    ['whitespace', '{"v":1, "outcome":"allowed","id":"x"}'],
    ['a repeated selector', null],
    ['an index-like attribute', null],
  ])('does not answer for %s', (_case, given) => {
    const base = payloadJson({
      id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
      policy_set_version: 'v',
      selectors: { b: 'x' },
      attributes: {},
      cost: 1,
      policies: [],
    });
    const p =
      given ??
      (_case === 'a repeated selector'
        ? base.replace('{"b":"x"}', '{"b":"x","b":"y"}')
        : base.replace('"attributes":{}', '"attributes":{"b":"x","1":"y"}'));
    expect(usageRecordFromOutbox(p, '1796029200123', '[]')).toBeUndefined();
  });
});
