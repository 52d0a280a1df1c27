import { describe, expect, it } from 'vitest';
import {
  decisionEventFromOutbox,
  kafkaKeyOf,
  ledgerEventFromOutbox,
  usageEventFromOutbox,
} from './event-builders';
import { parseDecisionEvent, parseDecisionV2Event, parseUsageEvent } from './event-parsers';
import { OutboxEntryError, type OutboxEntry, type OutboxPayload } from './outbox/outbox-payload';

const ID = '01JD5Z8M3KQ7W4X9T2B6N0R1CE';
const T = '1796029200123'; // 2026-11-30T09:00:00.123Z

function payload(overrides: Partial<OutboxPayload> = {}): OutboxPayload {
  return {
    v: 1,
    id: ID,
    policy_set_version: 'sha256:abc',
    tenant: 'acme',
    selectors: { tenant: 'acme', principal: 'svc-42', token: 'hmac:9f1c' },
    attributes: { principal_class: 'machine' },
    cost: 3,
    idempotency_key: 'b-77',
    outcome: 'allowed',
    policies: [
      {
        name: 'notary',
        mode: 'enforce',
        key: 'svc-42',
        windows: [
          { name: 'burst', role: 'burst', limit: 100 },
          { name: 'sustained', role: 'sustained', limit: 6000 },
        ],
      },
      {
        name: 'trial',
        mode: 'shadow',
        key: 'acme',
        windows: [{ name: 'day', role: 'sustained', limit: 10 }],
      },
    ],
    ...overrides,
  };
}

const RESULTS = [
  { remaining: 97, reset_ms: 30, would_deny: false },
  { remaining: 5997, reset_ms: 47000, would_deny: false },
  { remaining: 0, reset_ms: 9000, would_deny: true },
];

function entry(p: OutboxPayload = payload(), r: unknown[] = RESULTS): OutboxEntry {
  return { p: JSON.stringify(p), t: T, r: JSON.stringify(r) };
}

const POLICIES = [
  {
    name: 'notary',
    mode: 'enforce',
    key: 'svc-42',
    windows: [
      { name: 'burst', role: 'burst', limit: 100, remaining: 97, reset_ms: 30, would_deny: false },
      {
        name: 'sustained',
        role: 'sustained',
        limit: 6000,
        remaining: 5997,
        reset_ms: 47000,
        would_deny: false,
      },
    ],
  },
  {
    name: 'trial',
    mode: 'shadow',
    key: 'acme',
    windows: [{ name: 'day', role: 'sustained', limit: 10, remaining: 0, reset_ms: 9000, would_deny: true }],
  },
];

describe(usageEventFromOutbox.name, () => {
  it('builds the CloudEvents 1.0 usage event, results mapped onto windows in payload order', () => {
    const sut = usageEventFromOutbox(entry());
    expect(JSON.parse(JSON.stringify(sut))).toEqual({
      specversion: '1.0',
      id: ID,
      source: 'tally/decision-api',
      type: 'tally.usage.v1',
      time: '2026-11-30T09:00:00.123Z',
      subject: 'notary/svc-42',
      datacontenttype: 'application/json',
      data: {
        policy_set_version: 'sha256:abc',
        tenant: 'acme',
        selectors: { tenant: 'acme', principal: 'svc-42', token: 'hmac:9f1c' },
        attributes: { principal_class: 'machine' },
        cost: 3,
        outcome: 'allowed',
        idempotency_key: 'b-77',
        policies: POLICIES,
      },
    });
  });

  it('omits optional fields instead of writing null or undefined', () => {
    const p = payload({ tenant: undefined, idempotency_key: undefined });
    const json = JSON.stringify(usageEventFromOutbox(entry(p)));
    const data = (JSON.parse(json) as { data: object }).data;
    expect(Object.keys(data)).toEqual([
      'policy_set_version',
      'selectors',
      'attributes',
      'cost',
      'outcome',
      'policies',
    ]);
    expect(json).not.toContain('null');
  });

  it('has no usage for cost 0 (state report) nor for a denial', () => {
    expect(usageEventFromOutbox(entry(payload({ cost: 0 })))).toBeNull();
    expect(
      usageEventFromOutbox(entry(payload({ outcome: 'denied', reason: 'burst_quota_exhausted' }))),
    ).toBeNull();
  });

  it('keeps degraded decisions (allowed under fail_open) as usage, with their cause', () => {
    const p = payload({ outcome: 'degraded', degraded_cause: 'backend_timeout' });
    const sut = usageEventFromOutbox(entry(p, []));
    expect(sut?.data.outcome).toBe('degraded');
    expect(sut?.data.degraded_cause).toBe('backend_timeout');
    // No script ran, so no window state: windows carry their static facts only.
    expect(sut?.data.policies[0]?.windows[0]).toEqual({ name: 'burst', role: 'burst', limit: 100 });
  });

  it('has no subject for a decision no policy applied to', () => {
    const sut = usageEventFromOutbox(entry(payload({ policies: [] }), []));
    expect(sut?.subject).toBeUndefined();
    expect(sut?.data.policies).toEqual([]);
  });

  it('produces what the consumer accepts', () => {
    const sut = usageEventFromOutbox(entry());
    expect(parseUsageEvent(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
  });

  it('throws OutboxEntryError on a malformed entry, never builds a partial event', () => {
    expect(() => usageEventFromOutbox({ p: '{', t: T, r: '[]' })).toThrow(OutboxEntryError);
  });
});

describe(ledgerEventFromOutbox.name, () => {
  it('makes the usage event, byte for byte, of an allowed or degraded entry', () => {
    const degraded = entry(payload({ outcome: 'degraded', degraded_cause: 'backend_error' }), []);
    expect(JSON.stringify(ledgerEventFromOutbox(entry()))).toBe(
      JSON.stringify(usageEventFromOutbox(entry())),
    );
    expect(JSON.stringify(ledgerEventFromOutbox(degraded))).toBe(
      JSON.stringify(usageEventFromOutbox(degraded)),
    );
  });

  it('makes a tally.decision.v2 event of a denied entry, which the consumer accepts', () => {
    const sut = ledgerEventFromOutbox(entry(payload({ outcome: 'denied', reason: 'burst_quota_exhausted' })));
    expect(sut.type).toBe('tally.decision.v2');
    expect(sut.data).toMatchObject({ outcome: 'denied', reason: 'burst_quota_exhausted', count: 1 });
    expect(parseDecisionV2Event(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
  });

  it('refuses an allowed entry of cost 0 and a denied one without a reason', () => {
    expect(() => ledgerEventFromOutbox(entry(payload({ cost: 0 })))).toThrow(OutboxEntryError);
    expect(() => ledgerEventFromOutbox(entry(payload({ outcome: 'denied' })))).toThrow(OutboxEntryError);
  });

  it.each([
    ['allowed, a shadow would-deny, an idempotency key', payload(), RESULTS],
    [
      'allowed under an override',
      payload(),
      [{ remaining: 1, reset_ms: 5, would_deny: false, override: 3, limit: 4 }, RESULTS[1], RESULTS[2]],
    ],
    ['degraded, no window state', payload({ outcome: 'degraded', degraded_cause: 'backend_timeout' }), []],
  ])('carries every fact the tally.decision.v1 twin of the first contract carried (%s)', (_case, p, r) => {
    // given the one record a decision gets now and the twin relays of the first contract added
    const usage = ledgerEventFromOutbox(entry(p, r));
    const twin = decisionEventFromOutbox(entry(p, r));
    // then they differ only in `type` and the twin's `count`, always 1 for one decision
    const { count, ...facts } = twin.data;
    expect(count).toBe(1);
    expect(usage.data).toEqual(facts);
    expect({ ...usage, type: twin.type, data: twin.data }).toEqual(twin);
  });
});

describe(decisionEventFromOutbox.name, () => {
  it('builds the decision event with count 1 and no reason for an allow', () => {
    const sut = decisionEventFromOutbox(entry());
    expect(sut.type).toBe('tally.decision.v1');
    expect(sut.id).toBe(ID);
    expect(sut.data).toMatchObject({ outcome: 'allowed', count: 1, cost: 3, policies: POLICIES });
    expect(JSON.stringify(sut.data)).not.toContain('reason');
    expect(parseDecisionEvent(Buffer.from(JSON.stringify(sut)))).toEqual({ ok: true, event: sut });
  });

  it('keeps cost 0 decisions (they are decisions, just not usage)', () => {
    expect(decisionEventFromOutbox(entry(payload({ cost: 0 }))).data.cost).toBe(0);
  });

  it('carries the deny reason of a denied payload', () => {
    const sut = decisionEventFromOutbox(
      entry(payload({ outcome: 'denied', reason: 'sustained_quota_exhausted' })),
    );
    expect(sut.data).toMatchObject({ outcome: 'denied', reason: 'sustained_quota_exhausted', count: 1 });
  });
});

describe('runtime overrides in events', () => {
  it('name the override version per policy and its limit per window, and the consumer accepts them', () => {
    // given decide.lua's results for a policy whose override blocked `sustained` (version 7)
    const r = [
      { remaining: 0, reset_ms: 0, would_deny: true, override: 7, limit: 0 },
      { remaining: 0, reset_ms: 0, would_deny: true, override: 7, limit: 0 },
      RESULTS[2],
    ];
    const sut = decisionEventFromOutbox(entry(payload({ outcome: 'denied', reason: 'blocked' }), r));
    expect(sut.data.reason).toBe('blocked');
    expect(sut.data.policies[0]).toMatchObject({
      override_version: 7,
      windows: [
        { name: 'burst', limit: 100, override_limit: 0 },
        { name: 'sustained', limit: 6000, override_limit: 0 },
      ],
    });
    expect(sut.data.policies[1]).not.toHaveProperty('override_version');
    expect(parseDecisionEvent(JSON.stringify(sut))).toEqual({ ok: true, event: sut });
  });
});

describe(kafkaKeyOf.name, () => {
  it('is the tenant when there is one', () => {
    expect(kafkaKeyOf(decisionEventFromOutbox(entry()))).toBe('acme');
  });

  it('is the key of the subject without a tenant, even when the key contains "/"', () => {
    const p = payload({ tenant: undefined });
    const withSlash = { ...p, policies: [{ ...p.policies[0], key: 'svc/42' }] };
    expect(kafkaKeyOf(usageEventFromOutbox(entry(p))!)).toBe('svc-42');
    expect(kafkaKeyOf(usageEventFromOutbox(entry(withSlash, RESULTS.slice(0, 2)))!)).toBe('svc/42');
  });

  it('falls back to the event id when there is neither tenant nor policy', () => {
    expect(kafkaKeyOf(decisionEventFromOutbox(entry(payload({ tenant: undefined, policies: [] }), [])))).toBe(
      ID,
    );
  });
});
