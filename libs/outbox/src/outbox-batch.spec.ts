import { TOPICS } from '@tally/ledger';
import { describe, expect, it } from 'vitest';
import {
  CLOUDEVENTS_CONTENT_TYPE,
  parseDecisionV2Event,
  parseLeaseEvent,
  parseOverrideEvent,
  parseUsageEvent,
} from '@tally/events';
import { chunkTopicMessages, planOutboxBatch } from './outbox-batch';
import type { StreamEntry } from './stream-entries';

const ID = '01JD0000000000000000000001';

function entry(
  over: {
    id?: string;
    cost?: number;
    tenant?: string;
    stream?: string;
    streamId?: string;
    outcome?: 'allowed' | 'degraded' | 'denied';
    traceparent?: string;
  } = {},
): StreamEntry {
  const payload = {
    v: 1,
    id: over.id ?? ID,
    policy_set_version: 'set-1',
    ...(over.tenant === undefined ? {} : { tenant: over.tenant }),
    selectors: { principal: 'svc-42', ...(over.tenant === undefined ? {} : { tenant: over.tenant }) },
    attributes: {},
    cost: over.cost ?? 3,
    outcome: over.outcome ?? 'allowed',
    ...(over.outcome === 'denied' ? { reason: 'burst_quota_exhausted' } : {}),
    ...(over.outcome === 'degraded' ? { degraded_cause: 'backend_timeout' } : {}),
    policies: [
      { name: 'p', mode: 'enforce', key: 'svc-42', windows: [{ name: 'w', role: 'sustained', limit: 10 }] },
    ],
    ...(over.traceparent === undefined ? {} : { traceparent: over.traceparent }),
  };
  return {
    stream: over.stream ?? 'tally:v1:{s1}:outbox',
    id: over.streamId ?? '1764493200000-0',
    fields: {
      p: JSON.stringify(payload),
      t: '1764493200123',
      r: JSON.stringify([{ remaining: 7, reset_ms: 100, would_deny: false }]),
    },
  };
}

describe(planOutboxBatch.name, () => {
  it('makes one record of an allowed entry with a cost: its usage event, keyed by tenant', () => {
    const sut = planOutboxBatch([entry({ tenant: 'acme' })]);

    expect(sut.published).toEqual({ [TOPICS.usage]: 1 });
    const [usage] = sut.topicMessages;
    expect(sut.topicMessages).toHaveLength(1);
    expect(usage.topic).toBe(TOPICS.usage);
    expect(usage.messages[0].key).toBe('acme');
    expect(usage.messages[0].headers).toEqual({ 'content-type': CLOUDEVENTS_CONTENT_TYPE });
    expect(JSON.parse(String(usage.messages[0].value))).toMatchObject({
      id: ID,
      type: 'tally.usage.v1',
      subject: 'p/svc-42',
      time: '2025-11-30T09:00:00.123Z',
      data: { cost: 3, tenant: 'acme' },
    });
    expect(parseUsageEvent(String(usage.messages[0].value)).ok).toBe(true);
    expect([...sut.acks]).toEqual([['tally:v1:{s1}:outbox', ['1764493200000-0']]]);
  });

  it('makes exactly one record per decision entry, whatever the mix (no tally.decision.v1 twin)', () => {
    // given allowed and degraded entries of several tenants, one without a tenant
    const entries = [
      entry({ id: '01JD0000000000000000000001', tenant: 'acme', streamId: '1-0' }),
      entry({ id: '01JD0000000000000000000002', outcome: 'degraded', streamId: '2-0' }),
      entry({ id: '01JD0000000000000000000003', tenant: 'globex', streamId: '3-0' }),
    ];
    // when
    const sut = planOutboxBatch(entries);
    // then three usage records, nothing on any decision topic, keyed by tenant else the policy key
    expect(sut.published).toEqual({ [TOPICS.usage]: 3 });
    const messages = sut.topicMessages[0].messages;
    expect(messages.map((m) => m.key)).toEqual(['acme', 'svc-42', 'globex']);
    expect(
      messages.map((m) => (JSON.parse(String(m.value)) as { data: { outcome: string } }).data.outcome),
    ).toEqual(['allowed', 'degraded', 'allowed']);
    expect(sut.acks.get('tally:v1:{s1}:outbox')).toEqual(['1-0', '2-0', '3-0']);
  });

  it('makes a tally.decision.v2 record of a denied entry (one the engine coalesces instead)', () => {
    const sut = planOutboxBatch([entry({ outcome: 'denied', tenant: 'acme' })]);

    expect(sut.published).toEqual({ [TOPICS.decision]: 1 });
    const parsed = parseDecisionV2Event(String(sut.topicMessages[0].messages[0].value));
    expect(parsed.ok && parsed.event.data).toMatchObject({
      outcome: 'denied',
      reason: 'burst_quota_exhausted',
      count: 1,
    });
  });

  it('dead-letters an allowed entry of cost 0: no usage, no decision record, never dropped silently', () => {
    const sut = planOutboxBatch([entry({ cost: 0 })]);

    expect(sut.published).toEqual({ [TOPICS.deadLetter]: 1 });
    expect(sut.deadLettered).toBe(1);
    expect(sut.topicMessages[0].messages[0].headers?.['tally-dlq-reason']).toMatch(/cost 0/);
  });

  it('dead-letters a malformed entry with its reason and still acknowledges it', () => {
    const bad: StreamEntry = { stream: 'tally:v1:{s2}:outbox', id: '5-0', fields: { p: '{"v":2}', t: '1' } };

    const sut = planOutboxBatch([entry(), bad]);

    expect(sut.deadLettered).toBe(1);
    const dlq = sut.topicMessages.find((t) => t.topic === TOPICS.deadLetter);
    expect(dlq?.messages[0].headers?.['tally-dlq-reason']).toMatch(/unknown payload version 2/);
    expect(JSON.parse(String(dlq?.messages[0].value))).toMatchObject({ id: '5-0', fields: bad.fields });
    expect(sut.acks.get('tally:v1:{s2}:outbox')).toEqual(['5-0']);
  });
});

/** A release entry's payload (release.lua writes it as `l`). */
const lease = {
  v: 1,
  lease_id: `s1-${ID}`,
  id: ID,
  policy_set_version: 'set-1',
  tenant: 'acme',
  selectors: { tenant: 'acme' },
  units: 2,
  windows: [{ policy: 'jobs', window: 'inflight', key: 'acme', limit: 10 }],
};

/** An override change's head and stored override after it (override-write.lua writes `o` and `a`). */
const head = {
  v: 1,
  id: ID,
  action: 'set',
  policy: 'tenant-default',
  key: 'acme',
  tenant: 'acme',
  set_by: 'ops',
  reason: 'launch',
};
const after = '4;;hourly=500\n{"reason":"launch","set_by":"ops","updated_at":1764493200456}';

describe(`${planOutboxBatch.name}: a time no event can hold`, () => {
  // 8.64e15 ms is the last instant a Date (an event's `time`) holds; a 16-digit `t` above it would
  // make toISOString throw a RangeError, which stops the relay's loop instead of parking the entry.
  const late = '8640000000000001';

  it.each([
    ['a decision', { ...entry().fields, t: late }],
    ['a release', { l: JSON.stringify(lease), t: late }],
    ['an override change', { o: JSON.stringify(head), b: '', a: after, n: '4', t: late }],
  ])('dead-letters %s entry with it, and still acknowledges it', (_, fields) => {
    const sut = planOutboxBatch([{ stream: 'tally:v1:{s1}:outbox', id: '3-0', fields }]);

    expect(sut.deadLettered).toBe(1);
    expect(sut.topicMessages[0].messages[0].headers?.['tally-dlq-reason']).toMatch(
      /t is not epoch milliseconds/,
    );
    expect(sut.acks.get('tally:v1:{s1}:outbox')).toEqual(['3-0']);
  });

  it('still makes the record of the last millisecond a Date holds', () => {
    const sut = planOutboxBatch([{ ...entry(), fields: { ...entry().fields, t: '8640000000000000' } }]);

    expect(sut.deadLettered).toBe(0);
    expect(JSON.parse(String(sut.topicMessages[0].messages[0].value)).time).toBe(
      '+275760-09-13T00:00:00.000Z',
    );
  });
});

describe(`${planOutboxBatch.name}: trace context`, () => {
  const DECISION_SPAN = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const RELAY_SPAN = '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01';
  const value = (plan: ReturnType<typeof planOutboxBatch>) => String(plan.topicMessages[0].messages[0].value);

  it('writes no traceparent, and the same bytes, for an entry of an unsampled decision', () => {
    const calls: string[] = [];
    const sut = planOutboxBatch([entry({ tenant: 'acme' })], (parent) => (calls.push(parent), RELAY_SPAN));

    expect(value(sut)).toBe(value(planOutboxBatch([entry({ tenant: 'acme' })])));
    expect(value(sut)).not.toContain('traceparent');
    expect(calls).toEqual([]);
  });

  it('puts the relay span of a sampled decision on its record, as the CloudEvents extension', () => {
    // given an entry that carries the decision's span, and a relay that traces
    const seen: [string, string, string][] = [];
    const sut = planOutboxBatch(
      [entry({ tenant: 'acme', traceparent: DECISION_SPAN })],
      (parent, event, topic) => {
        seen.push([parent, event.id, topic]);
        return RELAY_SPAN;
      },
    );

    // then the relay's span is the decision span's child, and the record carries the relay's
    expect(seen).toEqual([[DECISION_SPAN, ID, TOPICS.usage]]);
    const parsed = parseUsageEvent(value(sut));
    expect(parsed.ok && parsed.event.traceparent).toBe(RELAY_SPAN);
    // in structured mode the extension is an attribute of the event, not a Kafka header
    expect(sut.topicMessages[0].messages[0].headers).toEqual({ 'content-type': CLOUDEVENTS_CONTENT_TYPE });
  });

  it("keeps the decision's span on the record when the relay does not trace", () => {
    const sut = planOutboxBatch([entry({ tenant: 'acme', traceparent: DECISION_SPAN })]);

    expect(JSON.parse(value(sut))).toMatchObject({ traceparent: DECISION_SPAN });
    expect(parseUsageEvent(value(sut)).ok).toBe(true);
  });

  it('leaves out a traceparent the event schema would refuse, rather than dead-letter the record', () => {
    const sut = planOutboxBatch(
      [entry({ tenant: 'acme', traceparent: 'not-a-traceparent' })],
      () => RELAY_SPAN,
    );

    expect(value(sut)).not.toContain('traceparent');
    expect(parseUsageEvent(value(sut)).ok).toBe(true);
  });

  it('gives a denial record no trace: it stands for many decisions', () => {
    const sut = planOutboxBatch([entry({ outcome: 'denied', traceparent: DECISION_SPAN })], () => RELAY_SPAN);

    expect(value(sut)).not.toContain('traceparent');
  });
});

describe(`${planOutboxBatch.name}: release entries`, () => {
  it('makes one valid tally.lease.v1 event of a release entry, keyed by tenant, and no usage', () => {
    const release: StreamEntry = {
      stream: 'tally:v1:{s1}:outbox',
      id: '7-0',
      fields: { l: JSON.stringify(lease), t: '1764493200456' },
    };

    const sut = planOutboxBatch([release]);

    expect(sut.published).toEqual({ [TOPICS.lease]: 1 });
    const message = sut.topicMessages[0].messages[0];
    expect(message.key).toBe('acme');
    const event = parseLeaseEvent(String(message.value));
    expect(event.ok).toBe(true);
    expect(event.ok && event.event).toEqual({
      specversion: '1.0',
      id: ID,
      source: 'tally/decision-api',
      type: 'tally.lease.v1',
      time: '2025-11-30T09:00:00.456Z',
      subject: 'jobs/acme',
      datacontenttype: 'application/json',
      data: {
        policy_set_version: 'set-1',
        tenant: 'acme',
        selectors: { tenant: 'acme' },
        lease_id: `s1-${ID}`,
        decision_id: ID,
        units: 2,
        outcome: 'released',
        windows: [{ policy: 'jobs', window: 'inflight', key: 'acme', limit: 10 }],
      },
    });
    expect(sut.acks.get('tally:v1:{s1}:outbox')).toEqual(['7-0']);
  });

  it('dead-letters a release entry it cannot read', () => {
    const bad: StreamEntry = {
      stream: 'tally:v1:{s1}:outbox',
      id: '8-0',
      fields: { l: JSON.stringify({ ...lease, v: 9 }), t: '1' },
    };

    const sut = planOutboxBatch([bad]);

    expect(sut.deadLettered).toBe(1);
    expect(sut.topicMessages[0].messages[0].headers?.['tally-dlq-reason']).toMatch(
      /unknown lease payload version 9/,
    );
  });
});

describe(`${planOutboxBatch.name}: override entries`, () => {
  it('makes one valid tally.override.v1 event on the decision topic, keyed by tenant, and no usage', () => {
    const change: StreamEntry = {
      stream: 'tally:v1:{s1}:outbox',
      id: '9-0',
      fields: { o: JSON.stringify(head), b: '', a: after, n: '4', t: '1764493200456' },
    };

    const sut = planOutboxBatch([change]);

    expect(sut.published).toEqual({ [TOPICS.decision]: 1 });
    const message = sut.topicMessages[0].messages[0];
    expect(message.key).toBe('acme');
    const event = parseOverrideEvent(String(message.value));
    expect(event).toMatchObject({
      ok: true,
      event: {
        id: ID,
        type: 'tally.override.v1',
        data: { action: 'set', after: { version: 4, limits: { hourly: 500 } }, set_by: 'ops', version: 4 },
      },
    });
    expect([...sut.acks]).toEqual([['tally:v1:{s1}:outbox', ['9-0']]]);
  });

  it('dead-letters an override entry it cannot read', () => {
    const bad: StreamEntry = {
      stream: 'tally:v1:{s1}:outbox',
      id: '10-0',
      fields: { o: JSON.stringify({ ...head, v: 9 }), b: '', a: after, n: '4', t: '1' },
    };

    const sut = planOutboxBatch([bad]);

    expect(sut.deadLettered).toBe(1);
    expect(sut.topicMessages[0].messages[0].headers?.['tally-dlq-reason']).toMatch(
      /unknown override head version 9/,
    );
  });
});

describe(chunkTopicMessages.name, () => {
  const message = (n: number) => ({ key: 'k', value: 'x'.repeat(100 - 65 - 1) + String(n % 10) });

  it('splits into requests under the byte cap, keeping order per topic', () => {
    const topicMessages = [
      { topic: 'a', messages: [0, 1, 2, 3, 4].map(message) },
      { topic: 'b', messages: [5, 6].map(message) },
    ];

    const sut = chunkTopicMessages(topicMessages, 300);

    expect(sut.map((chunk) => chunk.map((t) => `${t.topic}:${t.messages.length}`))).toEqual([
      ['a:3'],
      ['a:2', 'b:1'],
      ['b:1'],
    ]);
    expect(sut.flat().flatMap((t) => t.messages)).toEqual([
      ...topicMessages[0].messages,
      ...topicMessages[1].messages,
    ]);
  });

  it('never splits a single message, even one above the cap', () => {
    expect(chunkTopicMessages([{ topic: 'a', messages: [message(1)] }], 10)).toHaveLength(1);
  });
});
