import type { PolicySet } from '@tally/policy';
import { testPolicy } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { parseExtendReply } from './extend.script';
import { interpretExtendReply, leaseTtlsInForce } from './lease-extension';

const ID = 's3-01JD0000000000000000000001';
const NOW = Date.UTC(2026, 11, 2, 9, 0, 0);

describe(leaseTtlsInForce.name, () => {
  it('lists each concurrency window of the set with its lease TTL, and nothing else', () => {
    const set: PolicySet = {
      version: 'v1',
      loadedAt: 0,
      policies: [
        testPolicy('rate'),
        testPolicy('jobs', {
          windows: [
            { name: 'inflight', role: 'burst', algorithm: 'concurrency', limit: 5, periodMs: 30_000 },
            { name: 'hourly', role: 'sustained', algorithm: 'fixed_window', limit: 9, periodMs: 3_600_000 },
            { name: 'slots', role: 'burst', algorithm: 'concurrency', limit: 2, periodMs: 5_000 },
          ],
        }),
      ],
    };

    expect(leaseTtlsInForce(set)).toBe('jobs\tinflight\t30000\njobs\tslots\t5000');
    expect(leaseTtlsInForce({ ...set, policies: [testPolicy('rate')] })).toBe('');
  });
});

describe(interpretExtendReply.name, () => {
  const reply = (status: number, expires = NOW + 9_000, max = 0) =>
    parseExtendReply([status, expires, NOW, max]);

  it('answers the new expiry with the TTL from the script clock and the bound', () => {
    expect(interpretExtendReply(ID, reply(1, NOW + 30_000, 30_000))).toEqual({
      ok: true,
      leaseId: ID,
      expiresAtMs: NOW + 30_000,
      ttlMs: 30_000,
      maxTtlMs: 30_000,
    });
  });

  it.each([
    [0, 404, 'lease.not_found'],
    [2, 409, 'lease.released'],
    [3, 409, 'lease.expired'],
    [4, 403, 'auth.forbidden'],
    [5, 400, 'lease.ttl_too_long'],
    [6, 409, 'lease.not_extendable'],
  ])('maps status %i to %i %s', (status, http, code) => {
    expect(interpretExtendReply(ID, reply(status, NOW - 1, 30_000))).toMatchObject({
      ok: false,
      status: http,
      code,
    });
  });

  it('names the bound in a ttl_too_long message and the expiry in an expired one', () => {
    expect(interpretExtendReply(ID, reply(5, NOW + 1, 30_000))).toMatchObject({
      message: expect.stringContaining('30000') as unknown,
    });
    expect(interpretExtendReply(ID, reply(3, NOW - 1))).toMatchObject({
      message: expect.stringContaining(new Date(NOW - 1).toISOString()) as unknown,
    });
  });

  it('refuses a reply extend.lua never sends', () => {
    expect(() => parseExtendReply([7, 0, 0, 0])).toThrow(/unknown status/);
    expect(() => parseExtendReply([1, 0, 0])).toThrow(/malformed/);
  });
});
