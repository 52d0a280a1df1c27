import { describe, expect, it } from 'vitest';
import { denialEvent } from './denial-event';
import { decisionEventFromOutbox, ledgerEventFromOutbox } from './event-builders';
import type { OutboxEntry, OutboxPayload } from './outbox/outbox-payload';

/**
 * The bytes on Kafka, pinned: the builders derive each event's `data` from the payload, so a change
 * of a builder or of the schema it follows shows here as a diff of the wire, not only of the values.
 */
const payload: OutboxPayload = {
  v: 1,
  outcome: 'allowed',
  id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
  policy_set_version: 'sha256:abc',
  tenant: 'acme',
  selectors: { tenant: 'acme', principal: 'svc-42' },
  attributes: { principal_class: 'machine' },
  cost: 3,
  idempotency_key: 'b-77',
  policies: [
    {
      name: 'notary',
      mode: 'enforce',
      key: 'svc-42',
      windows: [
        { name: 'burst', role: 'burst', limit: 100 },
        { name: 'day', role: 'sustained', limit: 10 },
      ],
    },
  ],
};
const T = '1796029200123';
const R = JSON.stringify([
  { remaining: 97, reset_ms: 30, would_deny: false, override: 2, limit: 50 },
  { remaining: 0, reset_ms: 9000, would_deny: true, override: 2 },
]);

function entry(p: object, r = R): OutboxEntry {
  return { p: JSON.stringify({ ...payload, ...p }), t: T, r };
}

const cases: [string, () => unknown, string][] = [
  [
    'an allowed entry → tally.usage.v1',
    () => ledgerEventFromOutbox(entry({})),
    '{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1CE","source":"tally/decision-api","time":"2026-11-30T09:00:00.123Z","subject":"notary/svc-42","datacontenttype":"application/json","type":"tally.usage.v1","data":{"policy_set_version":"sha256:abc","tenant":"acme","selectors":{"tenant":"acme","principal":"svc-42"},"attributes":{"principal_class":"machine"},"cost":3,"outcome":"allowed","idempotency_key":"b-77","policies":[{"name":"notary","mode":"enforce","key":"svc-42","override_version":2,"windows":[{"name":"burst","role":"burst","limit":100,"remaining":97,"reset_ms":30,"would_deny":false,"override_limit":50},{"name":"day","role":"sustained","limit":10,"remaining":0,"reset_ms":9000,"would_deny":true}]}]}}',
  ],
  [
    'a degraded entry → tally.usage.v1',
    () => ledgerEventFromOutbox(entry({ outcome: 'degraded', degraded_cause: 'backend_timeout' }, '[]')),
    '{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1CE","source":"tally/decision-api","time":"2026-11-30T09:00:00.123Z","subject":"notary/svc-42","datacontenttype":"application/json","type":"tally.usage.v1","data":{"policy_set_version":"sha256:abc","tenant":"acme","selectors":{"tenant":"acme","principal":"svc-42"},"attributes":{"principal_class":"machine"},"cost":3,"outcome":"degraded","degraded_cause":"backend_timeout","idempotency_key":"b-77","policies":[{"name":"notary","mode":"enforce","key":"svc-42","windows":[{"name":"burst","role":"burst","limit":100},{"name":"day","role":"sustained","limit":10}]}]}}',
  ],
  [
    'an allowed entry → its tally.decision.v1 twin',
    () => decisionEventFromOutbox(entry({})),
    '{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1CE","source":"tally/decision-api","time":"2026-11-30T09:00:00.123Z","subject":"notary/svc-42","datacontenttype":"application/json","type":"tally.decision.v1","data":{"policy_set_version":"sha256:abc","tenant":"acme","selectors":{"tenant":"acme","principal":"svc-42"},"attributes":{"principal_class":"machine"},"cost":3,"outcome":"allowed","idempotency_key":"b-77","count":1,"policies":[{"name":"notary","mode":"enforce","key":"svc-42","override_version":2,"windows":[{"name":"burst","role":"burst","limit":100,"remaining":97,"reset_ms":30,"would_deny":false,"override_limit":50},{"name":"day","role":"sustained","limit":10,"remaining":0,"reset_ms":9000,"would_deny":true}]}]}}',
  ],
  [
    'a denied entry → tally.decision.v1',
    () => decisionEventFromOutbox(entry({ outcome: 'denied', reason: 'burst_quota_exhausted' })),
    '{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1CE","source":"tally/decision-api","time":"2026-11-30T09:00:00.123Z","subject":"notary/svc-42","datacontenttype":"application/json","type":"tally.decision.v1","data":{"policy_set_version":"sha256:abc","tenant":"acme","selectors":{"tenant":"acme","principal":"svc-42"},"attributes":{"principal_class":"machine"},"cost":3,"outcome":"denied","reason":"burst_quota_exhausted","idempotency_key":"b-77","count":1,"policies":[{"name":"notary","mode":"enforce","key":"svc-42","override_version":2,"windows":[{"name":"burst","role":"burst","limit":100,"remaining":97,"reset_ms":30,"would_deny":false,"override_limit":50},{"name":"day","role":"sustained","limit":10,"remaining":0,"reset_ms":9000,"would_deny":true}]}]}}',
  ],
  [
    'coalesced denials → tally.decision.v2',
    () =>
      denialEvent({
        shard: 3,
        second: 1796029200,
        field: 'f',
        count: 4,
        reason: 'sustained_quota_exhausted',
        p: entry({
          outcome: 'denied',
          reason: 'sustained_quota_exhausted',
          tenant: undefined,
          idempotency_key: undefined,
        }).p,
        r: R,
      }),
    '{"specversion":"1.0","id":"01M8NTXDM0ED1VH1DJCCPAF2PB","source":"tally/decision-api","time":"2026-11-30T09:00:00.000Z","subject":"notary/svc-42","datacontenttype":"application/json","type":"tally.decision.v2","data":{"policy_set_version":"sha256:abc","selectors":{"tenant":"acme","principal":"svc-42"},"attributes":{"principal_class":"machine"},"cost":3,"outcome":"denied","reason":"sustained_quota_exhausted","count":4,"policies":[{"name":"notary","mode":"enforce","key":"svc-42","override_version":2,"windows":[{"name":"burst","role":"burst","limit":100,"remaining":97,"reset_ms":30,"would_deny":false,"override_limit":50},{"name":"day","role":"sustained","limit":10,"remaining":0,"reset_ms":9000,"would_deny":true}]}]}}',
  ],
];

describe('event bytes', () => {
  it.each(cases)('%s: exactly the pinned JSON', (_name, build, json) => {
    expect(JSON.stringify(build())).toBe(json);
  });
});
