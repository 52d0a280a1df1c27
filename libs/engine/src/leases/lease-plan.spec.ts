import type { Policy } from '@tally/policy';
import { testPolicy } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { parseDecideReply } from '../decide.script';
import { shardKeys } from '../store/keys';
import { planLease } from './lease-plan';

const ID = '01JD0000000000000000000001';
const rate: Policy = testPolicy('rate');
const jobs: Policy = testPolicy('jobs', {
  windows: [
    { name: 'inflight', role: 'burst', algorithm: 'concurrency', limit: 5, periodMs: 30_000 },
    { name: 'hourly', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 3_600_000 },
  ],
});

describe(planLease.name, () => {
  it('plans no lease without a concurrency window, nor for a peek', () => {
    expect(
      planLease(ID, 'v1', shardKeys(3), { tenant: 'acme' }, 1, [{ policy: rate, key: 'p' }]),
    ).toBeUndefined();
    expect(
      planLease(ID, 'v1', shardKeys(3), { tenant: 'acme' }, 0, [{ policy: jobs, key: 'p' }]),
    ).toBeUndefined();
  });

  it('names the lease by shard and decision, its record in the shard, and the release payload', () => {
    const sut = planLease(ID, 'v1', shardKeys(3), { tenant: 'acme', principal: 'p' }, 2, [
      { policy: rate, key: 'p' },
      { policy: jobs, key: 'acme:p' },
    ]);

    expect(sut?.id).toBe(`s3-${ID}`);
    expect(sut?.redisKey).toBe(`tally:v1:{s3}:lease:${ID}`);
    expect(JSON.parse(sut?.payloadJson ?? '')).toEqual({
      v: 1,
      lease_id: `s3-${ID}`,
      id: ID,
      policy_set_version: 'v1',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'p' },
      units: 2,
      windows: [{ policy: 'jobs', window: 'inflight', key: 'acme:p', limit: 5 }],
    });
  });
});

describe(parseDecideReply.name, () => {
  it("reads a lease's expiry after the windows' triples, and none without it", () => {
    expect(parseDecideReply([1, 1000, 0, 0, '', 1, 4, 30000, 0, 1, 31000, 0])).toMatchObject({
      kind: 'allowed',
      windows: [{ remaining: 4, resetMs: 30000, wouldDeny: false }],
      leaseExpiresAt: 31000,
    });
    expect(parseDecideReply([1, 1000, 0, 0, '', 1, 4, 30000, 0, 0, 0])).not.toHaveProperty('leaseExpiresAt');
    expect(parseDecideReply([2, 1000, 0, 0, '{}', 1, 4, 30000, 0, 1, 31000, 0])).toMatchObject({
      kind: 'replayed',
      leaseExpiresAt: 31000,
    });
  });

  it('reads counts of 2^52 and more, which decide.lua sends as decimal strings, exactly', () => {
    // one window: remaining 2^53 − 2; the overrides trailer: limit 2^53 − 1, version 7
    const sut = parseDecideReply(
      [1, 1000, 0, 0, '', 1, '9007199254740990', 60000, 0, 0, 1, '9007199254740991', 7],
      1,
    );
    expect(sut).toMatchObject({
      windows: [{ remaining: 9007199254740990, override: { limit: Number.MAX_SAFE_INTEGER, version: 7 } }],
    });
  });

  it('reads a lease and an override together by their counts, not by what is left over', () => {
    // two windows; a lease; an override on both (limit, version each)
    const sut = parseDecideReply([1, 1000, 0, 0, '', 2, 4, 30000, 0, 9, 500, 0, 1, 31000, 2, 5, 3, 10, 3], 2);
    expect(sut).toMatchObject({
      kind: 'allowed',
      leaseExpiresAt: 31000,
      windows: [
        { remaining: 4, override: { limit: 5, version: 3 } },
        { remaining: 9, override: { limit: 10, version: 3 } },
      ],
    });
  });

  it('refuses a reply whose counts do not add up to its length', () => {
    expect(() => parseDecideReply([1, 1000, 0, 0, '', 1, 4, 30000, 0, 0, 0, 7])).toThrow('malformed');
    expect(() => parseDecideReply([1, 1000, 0, 0, '', 1, 4, 30000, 0, 0, 0], 2)).toThrow('planned');
  });
});
