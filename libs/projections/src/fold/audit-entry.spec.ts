import { describe, expect, it } from 'vitest';
import { auditEntryFromMember, auditMember, type AuditEntry } from './audit-entry';

const entry: AuditEntry = {
  id: '01JD5Z8M3KQ7W4X9T2B6N0R1CA',
  timeMs: 1_796_029_200_000,
  type: 'denied',
  tenant: 'acme',
  policy: 'notary',
  reason: 'burst_quota_exhausted',
  count: 17,
  selectors: { tenant: 'acme', principal: 'svc-42' },
  policySetVersion: 'v1',
};

describe(auditMember.name, () => {
  it('leaves the time out (it is the score), so the same row at another time is the same member', () => {
    const sut = auditMember(entry);
    expect(sut).toBe(
      '["01JD5Z8M3KQ7W4X9T2B6N0R1CA","denied","acme","notary","burst_quota_exhausted",17,{"tenant":"acme","principal":"svc-42"},"v1"]',
    );
    expect(auditMember({ ...entry, timeMs: 0 })).toBe(sut);
  });

  it('tells rows of one event apart by policy (two shadow policies would-deny)', () => {
    expect(auditMember({ ...entry, policy: 'a' })).not.toBe(auditMember({ ...entry, policy: 'b' }));
  });
});

describe(auditEntryFromMember.name, () => {
  it('round-trips with the score as time', () => {
    expect(auditEntryFromMember(auditMember(entry), entry.timeMs)).toEqual(entry);
  });

  it('round-trips a reload without tenant, policy or reason', () => {
    const reload: AuditEntry = {
      id: 'policy_reload:v2',
      timeMs: 5,
      type: 'policy_reload',
      count: 1,
      selectors: {},
      policySetVersion: 'v2',
    };
    expect(auditEntryFromMember(auditMember(reload), 5)).toEqual(reload);
  });

  it('round-trips an override row with its change as a ninth element', () => {
    const row: AuditEntry = {
      id: '01JD5Z8M3KQ7W4X9T2B6N0R1CB',
      timeMs: 7,
      type: 'override',
      tenant: 'acme',
      policy: 'notary',
      reason: 'launch',
      count: 1,
      selectors: {},
      policySetVersion: '',
      change: { action: 'set', key: 'acme', version: 3, set_by: 'ops' },
    };
    const member = auditMember(row);
    expect((JSON.parse(member) as unknown[]).length).toBe(9);
    expect(auditEntryFromMember(member, 7)).toEqual(row);
  });

  it.each([
    'nope',
    '{}',
    '[1,2,3]',
    '["id","exploded",null,null,null,1,{},"v"]',
    '["id","denied",null,null,null,"1",{},"v"]',
  ])('refuses %s', (member) => {
    expect(auditEntryFromMember(member, 0)).toBeNull();
  });
});
