import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { eventContractDocuments } from './event-contracts';
import { parseDecisionEvent, parseLedgerEvent, parseUsageEvent } from './event-parsers';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are edited freely into invalid events
type Plain = Record<string, any>;

function usage(): Plain {
  return {
    specversion: '1.0',
    id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
    source: 'tally/decision-api',
    type: 'tally.usage.v1',
    time: '2026-11-30T09:00:00.123Z',
    subject: 'notary/svc-42',
    datacontenttype: 'application/json',
    data: {
      policy_set_version: 'sha256:abc',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'svc-42' },
      attributes: {},
      cost: 3,
      outcome: 'allowed',
      policies: [
        {
          name: 'notary',
          mode: 'enforce',
          key: 'svc-42',
          windows: [
            { name: 'burst', role: 'burst', limit: 100, remaining: 97, reset_ms: 30, would_deny: false },
          ],
        },
      ],
    },
  };
}

function decision(): Plain {
  const event = usage();
  return { ...event, type: 'tally.decision.v1', data: { ...event.data, count: 1 } };
}

function denied(): Plain {
  const event = decision();
  return { ...event, data: { ...event.data, outcome: 'denied', reason: 'burst_quota_exhausted', count: 9 } };
}

/** Applies `edit` to a fresh copy: the table reads as "valid event, except …". */
function edited(base: () => Plain, edit: (event: Plain) => void): string {
  const event = base();
  edit(event);
  return JSON.stringify(event);
}

describe(parseUsageEvent.name, () => {
  it('accepts a valid event as the event it reads', () => {
    const sut = parseUsageEvent(Buffer.from(JSON.stringify(usage())));
    expect(sut).toEqual({ ok: true, event: usage() });
  });

  it('tolerates unknown CloudEvents extension attributes (forward compatibility)', () => {
    expect(parseUsageEvent(edited(usage, (e) => (e.traceparent = '00-abc'))).ok).toBe(true);
  });

  it.each([
    ['not JSON', '{"specversion"', 'not JSON'],
    ['an array', '[]', 'not a JSON object'],
    ['null', 'null', 'not a JSON object'],
    [
      'a decision event',
      JSON.stringify(decision()),
      'type: expected tally.usage.v1, got "tally.decision.v1"',
    ],
    ['no type', edited(usage, (e) => delete e.type), 'type: expected tally.usage.v1, got undefined'],
    [
      'specversion 0.3',
      edited(usage, (e) => (e.specversion = '0.3')),
      'specversion: specversion must be equal to 1.0',
    ],
    ['no id', edited(usage, (e) => delete e.id), 'id: id must be a ULID'],
    ['an id that is no ULID', edited(usage, (e) => (e.id = 'abc')), 'id: id must be a ULID'],
    ['no source', edited(usage, (e) => delete e.source), 'source: source should not be empty'],
    ['no time', edited(usage, (e) => delete e.time), 'time: time must be RFC 3339 date'],
    [
      'a time without zone',
      edited(usage, (e) => (e.time = '2026-11-30T09:00:00')),
      'time: time must be RFC 3339',
    ],
    [
      'an xml payload',
      edited(usage, (e) => (e.datacontenttype = 'text/xml')),
      'datacontenttype: datacontenttype must be equal to application/json',
    ],
    ['no data', edited(usage, (e) => delete e.data), 'data: data must be an object'],
    ['data as a string', edited(usage, (e) => (e.data = 'x')), 'data: data must be an object'],
    ['negative cost', edited(usage, (e) => (e.data.cost = -1)), 'data.cost: cost must not be less than 1'],
    ['cost 0', edited(usage, (e) => (e.data.cost = 0)), 'data.cost: cost must not be less than 1'],
    [
      'cost past 2^53 − 1 (not exact as a number)',
      edited(usage, (e) => (e.data.cost = 2 ** 53)),
      'data.cost: cost must not be greater than 9007199254740991',
    ],
    [
      'fractional cost',
      edited(usage, (e) => (e.data.cost = 1.5)),
      'data.cost: cost must be an integer number',
    ],
    [
      'cost as a string',
      edited(usage, (e) => (e.data.cost = '3')),
      'data.cost: cost must be an integer number',
    ],
    [
      'a denied outcome',
      edited(usage, (e) => (e.data.outcome = 'denied')),
      'data.outcome: outcome must be one of the following values: allowed, degraded',
    ],
    [
      'no policy set version',
      edited(usage, (e) => delete e.data.policy_set_version),
      'data.policy_set_version: policy_set_version should not be empty',
    ],
    [
      'nested selectors',
      edited(usage, (e) => (e.data.selectors = { a: { b: 1 } })),
      'data.selectors: selectors must be an object of string values',
    ],
    [
      'attributes as a list',
      edited(usage, (e) => (e.data.attributes = ['x'])),
      'data.attributes: attributes must be an object of string values',
    ],
    ['no policies', edited(usage, (e) => delete e.data.policies), 'data.policies: policies must be an array'],
    [
      'a bad mode',
      edited(usage, (e) => (e.data.policies[0].mode = 'dry')),
      'data.policies[0].mode: mode must be one of the following values: enforce, shadow',
    ],
    [
      'a bad role',
      edited(usage, (e) => (e.data.policies[0].windows[0].role = 'x')),
      'data.policies[0].windows[0].role: role must be one of the following values: burst, sustained',
    ],
    [
      'a zero limit',
      edited(usage, (e) => (e.data.policies[0].windows[0].limit = 0)),
      'data.policies[0].windows[0].limit: limit must not be less than 1',
    ],
    ['a policy that is no object', edited(usage, (e) => (e.data.policies = [1])), 'data.policies'],
  ])('rejects %s', (_, message, reason) => {
    const sut = parseUsageEvent(message);
    expect(sut.ok).toBe(false);
    expect(!sut.ok && sut.reason).toContain(reason);
  });

  it('lists every problem at once', () => {
    const sut = parseUsageEvent(edited(usage, (e) => ((e.id = 'x'), (e.data.cost = -2))));
    expect(!sut.ok && sut.reason.split('; ').sort()).toEqual([
      'data.cost: cost must not be less than 1',
      'id: id must be a ULID',
    ]);
  });
});

describe(parseDecisionEvent.name, () => {
  it.each([
    ['an allowed decision', decision],
    ['coalesced denials', denied],
  ])('accepts %s', (_, event) => {
    const sut = parseDecisionEvent(JSON.stringify(event()));
    expect(sut).toEqual({ ok: true, event: event() });
  });

  it('accepts cost 0 (a state report is still a decision)', () => {
    expect(parseDecisionEvent(edited(decision, (e) => (e.data.cost = 0))).ok).toBe(true);
  });

  it.each([
    ['a usage event', JSON.stringify(usage()), 'type: expected tally.decision.v1, got "tally.usage.v1"'],
    [
      'a denial without reason',
      edited(denied, (e) => delete e.data.reason),
      'data.reason: reason must be one of the following values: burst_quota_exhausted',
    ],
    [
      'an unknown reason',
      edited(denied, (e) => (e.data.reason = 'too_many')),
      'data.reason: reason must be one of',
    ],
    ['a reason on an allow', edited(decision, (e) => (e.data.reason = 'nope')), 'data.reason'],
    ['count 0', edited(denied, (e) => (e.data.count = 0)), 'data.count: count must not be less than 1'],
    ['no count', edited(denied, (e) => delete e.data.count), 'data.count: count must be an integer number'],
    ['negative cost', edited(decision, (e) => (e.data.cost = -1)), 'data.cost: cost must not be less than 0'],
    [
      'an unknown outcome',
      edited(decision, (e) => (e.data.outcome = 'maybe')),
      'data.outcome: outcome must be one of the following values: allowed, denied, degraded',
    ],
  ])('rejects %s', (_, message, reason) => {
    const sut = parseDecisionEvent(message);
    expect(!sut.ok && sut.reason).toContain(reason);
  });
});

describe(parseLedgerEvent.name, () => {
  it('validates each event against the schema of its type', () => {
    const a = parseLedgerEvent(JSON.stringify(usage()));
    const b = parseLedgerEvent(JSON.stringify(denied()));
    expect(a).toEqual({ ok: true, event: usage() });
    expect(b).toEqual({ ok: true, event: denied() });
  });

  it('rejects an unknown type, and validates the known ones', () => {
    expect(parseLedgerEvent(edited(usage, (e) => (e.type = 'tally.usage.v2')))).toEqual({
      ok: false,
      reason: 'type: unknown event type "tally.usage.v2"',
    });
    const sut = parseLedgerEvent(edited(decision, (e) => delete e.data.count));
    expect(!sut.ok && sut.reason).toContain('data.count');
  });
});

describe('parser and published schema', () => {
  // The parsers accept with the compiled validator; what they accept must satisfy the documents
  // published in docs/contracts/, read by a plain ajv as another team's tools would.
  const documents = Object.fromEntries(eventContractDocuments().map((d) => [d.file, d.schema]));
  const published = new Ajv({ strictRequired: false, validateFormats: false });
  it.each([
    ['usage', 'tally.usage.v1', usage()],
    [
      'usage with nulls where optional',
      'tally.usage.v1',
      { ...usage(), subject: null, data: { ...usage().data, tenant: null } },
    ],
    [
      'usage without window state',
      'tally.usage.v1',
      edited(usage, (e) => (e.data.policies[0].windows = [{ name: 'b', role: 'burst', limit: 1 }])),
    ],
    ['decision', 'tally.decision.v1', decision()],
    ['denied', 'tally.decision.v1', denied()],
    [
      'degraded',
      'tally.decision.v1',
      edited(decision, (e) => ((e.data.outcome = 'degraded'), (e.data.degraded_cause = 'backend_timeout'))),
    ],
  ] as const)('both accept %s', (_, type, event) => {
    const sut = parseLedgerEvent(typeof event === 'string' ? event : JSON.stringify(event));
    expect(sut.ok).toBe(true);
    if (!sut.ok) return;
    expect(published.validate(documents[`${type}.event.schema.json`] ?? false, sut.event)).toBe(true);
    expect(published.validate(documents[`${type}.data.schema.json`] ?? false, sut.event.data)).toBe(true);
  });

  it('and both refuse a denial without its reason (the if/then of the schema)', () => {
    const event = denied();
    delete event.data.reason;
    expect(parseDecisionEvent(JSON.stringify(event)).ok).toBe(false);
    expect(published.validate(documents['tally.decision.v1.data.schema.json'] ?? false, event.data)).toBe(
      false,
    );
  });

  it('drops null optional fields so the parsed event matches its type', () => {
    const sut = parseUsageEvent(
      edited(
        usage,
        (e) => ((e.subject = null), (e.data.tenant = null), (e.data.policies[0].windows[0].remaining = null)),
      ),
    );
    expect(sut.ok).toBe(true);
    if (!sut.ok) return;
    expect('subject' in sut.event && sut.event.subject).toBeFalsy();
    expect(sut.event.data.tenant).toBeUndefined();
    expect(sut.event.data.policies[0]?.windows[0]?.remaining).toBeUndefined();
    expect(JSON.stringify(sut.event)).not.toContain('null');
  });
});
