import { coalescedDenialId } from '@tally/events';
import { TOPICS } from '@tally/ledger';
import { describe, expect, it } from 'vitest';
import { planDenialDrain } from './denial-drain';

const payload = JSON.stringify({
  v: 1,
  outcome: 'denied',
  reason: 'burst_quota_exhausted',
  id: '01JD0000000000000000000009',
  policy_set_version: 'set-1',
  tenant: 'acme',
  selectors: { tenant: 'acme', principal: 'svc' },
  attributes: {},
  cost: 1,
  policies: [{ name: 'p', mode: 'enforce', key: 'svc', windows: [{ name: 'b', role: 'burst', limit: 5 }] }],
});
const results = JSON.stringify([{ remaining: 0, reset_ms: 200, would_deny: true }]);

describe(planDenialDrain.name, () => {
  it('one event per closed (second, policy, key, reason) with its count and a deterministic id', () => {
    const field = '1000|p|svc|burst_quota_exhausted';
    const hash = {
      [field]: '50',
      [`${field}#p`]: payload,
      [`${field}#r`]: results,
      // the current second is still being counted: left alone
      '1001|p|svc|burst_quota_exhausted': '3',
      '1001|p|svc|burst_quota_exhausted#p': payload,
    };

    const sut = planDenialDrain(7, 1001, hash);

    expect(sut.events).toBe(1);
    expect(sut.denials).toBe(50);
    expect([...sut.fields].sort()).toEqual([field, `${field}#p`, `${field}#r`]);
    expect(sut.topicMessages).toHaveLength(1);
    expect(sut.topicMessages[0].topic).toBe(TOPICS.decision);
    const event = JSON.parse(String(sut.topicMessages[0].messages[0].value));
    expect(event).toMatchObject({
      id: coalescedDenialId(7, 1000, field),
      type: 'tally.decision.v2',
      time: '1970-01-01T00:16:40.000Z',
      data: { outcome: 'denied', reason: 'burst_quota_exhausted', count: 50, tenant: 'acme' },
    });
    expect(sut.topicMessages[0].messages[0].key).toBe('acme');
    // the same hash drained again (crash before HDEL) yields the same id
    expect(JSON.parse(String(planDenialDrain(7, 1001, hash).topicMessages[0].messages[0].value)).id).toBe(
      event.id,
    );
  });

  it('dead-letters (and deletes) a count without its sample and fields it cannot parse', () => {
    const sut = planDenialDrain(0, 2000, { '1999|p|k|burst_quota_exhausted': '4', garbage: 'x' });

    expect(sut.events).toBe(0);
    expect(sut.deadLettered).toBe(2);
    expect(sut.topicMessages.map((t) => t.topic)).toEqual([TOPICS.deadLetter]);
    expect([...sut.fields].sort()).toEqual(['1999|p|k|burst_quota_exhausted', 'garbage']);
  });

  it('drains nothing from an empty hash', () => {
    expect(planDenialDrain(0, 5, {})).toMatchObject({ fields: [], topicMessages: [], events: 0 });
  });
});
