import { describe, expect, it } from 'vitest';
import {
  allShardKeys,
  decodeScope,
  degradedMarkerKey,
  encodeScope,
  fnv1a32,
  idempotencyKey,
  leaseIdOf,
  leaseKey,
  parseLeaseId,
  overrideField,
  overrideIndexKey,
  overridesKey,
  parsePolicyStateKey,
  policyStateKey,
  shardKeys,
  shardOf,
  windowKey,
} from './keys';

describe('keys', () => {
  describe(fnv1a32.name, () => {
    it.each([
      ['', 0x811c9dc5],
      ['a', 0xe40c292c],
      ['foobar', 0xbf9cf968],
    ])('matches the published FNV-1a 32-bit vector for %j', (text, hash) => {
      expect(fnv1a32(text)).toBe(hash);
    });

    it('hashes UTF-8 bytes, not UTF-16 code units', () => {
      expect(fnv1a32('évian')).toBe(0x1b591f73);
    });
  });

  describe(shardOf.name, () => {
    it('is fnv1a32(tenant) mod shards, and the shard of `_` without a tenant', () => {
      expect(shardOf('acme', 64)).toBe(47);
      expect(shardOf(undefined, 64)).toBe(46);
      expect(shardOf('acme', 1)).toBe(0);
    });
  });

  it('builds the shard keys with the {s<N>} hash tag', () => {
    const sut = shardKeys(7);
    expect(sut).toEqual({
      shard: 7,
      base: 'tally:v1:{s7}',
      outbox: 'tally:v1:{s7}:outbox',
      denials: 'tally:v1:{s7}:denials',
      denialLease: 'tally:v1:{s7}:denials:lease',
    });
    expect(allShardKeys(3).map((k) => k.outbox)).toEqual([
      'tally:v1:{s0}:outbox',
      'tally:v1:{s1}:outbox',
      'tally:v1:{s2}:outbox',
    ]);
  });

  it('builds one window key per policy window, scoped by tenant', () => {
    const shard = shardKeys(47);
    expect(windowKey(shard, encodeScope('acme'), 'notary', 'burst', 'svc-42')).toBe(
      'tally:v1:{s47}:w:notary:burst:acme:svc-42',
    );
    expect(windowKey(shard, encodeScope(undefined), 'notary', 'sustained', 'svc-42:evaluate')).toBe(
      'tally:v1:{s47}:w:notary:sustained:_:svc-42:evaluate',
    );
  });

  it('builds one state hash per policy key for its rate windows, scoped by tenant', () => {
    const shard = shardKeys(47);
    expect(policyStateKey(shard, encodeScope('acme'), 'notary', 'svc-42')).toBe(
      'tally:v1:{s47}:pk:notary:acme:svc-42',
    );
    expect(policyStateKey(shard, encodeScope(undefined), 'notary', 'svc-42:evaluate')).toBe(
      'tally:v1:{s47}:pk:notary:_:svc-42:evaluate',
    );
  });

  it('parses a policy state key back into tenant and key, for that policy only', () => {
    expect(parsePolicyStateKey('tally:v1:{s47}:pk:notary:a%3Ab:svc:1', 'notary')).toEqual({
      tenant: 'a:b',
      key: 'svc:1',
    });
    expect(parsePolicyStateKey('tally:v1:{s47}:pk:notary:_:svc', 'notary')).toEqual({
      tenant: null,
      key: 'svc',
    });
    for (const other of [
      'tally:v1:{s1}:pk:notary2:acme:k',
      'tally:v1:{s1}:w:notary:burst:acme:k',
      'tally:v1:{s1}:pk:notary:acme',
      'tally:v2:{s1}:pk:notary:acme:k',
    ])
      expect(parsePolicyStateKey(other, 'notary')).toBeNull();
  });

  it('builds the idempotency key from the scope and the base64url SHA-256 of the caller key', () => {
    expect(idempotencyKey(shardKeys(7), encodeScope('acme'), 'b-77')).toBe(
      'tally:v1:{s7}:idem.sha256:acme:8qzNu1aDjPoR7IjBwOyWsGGwIDtCJ4m2U4mXZ6ze4kQ',
    );
    expect(idempotencyKey(shardKeys(7), encodeScope(undefined), 'x:y')).toBe(
      'tally:v1:{s7}:idem.sha256:_:EnTihmhrVP52XsQHNWZbS_eJzuKlsiEkxeBJGojhUnE',
    );
  });

  it('never puts the caller key in the name, whatever its length', () => {
    const long = 'k'.repeat(255);
    const sut = idempotencyKey(shardKeys(7), encodeScope('acme'), long);

    expect(sut).not.toContain(long.slice(0, 8));
    expect(sut).toHaveLength('tally:v1:{s7}:idem.sha256:acme:'.length + 43);
  });

  describe(encodeScope.name, () => {
    it.each([
      ['acme', 'acme'],
      ['a:b', 'a%3Ab'],
      ['{x}', '%7Bx%7D'],
      ['100%', '100%25'],
      // a tenant literally named `_` must not share the no-tenant scope
      ['_', '%5F'],
      ['_x', '_x'],
    ])('encodes %j as %j', (tenant, scope) => {
      expect(encodeScope(tenant)).toBe(scope);
    });
  });

  describe(decodeScope.name, () => {
    it.each([
      ['acme', 'acme'],
      ['a%3Ab', 'a:b'],
      ['%7Bx%7D', '{x}'],
      ['100%25', '100%'],
      ['%5F', '_'],
      ['_x', '_x'],
      // only what encodeScope escapes is decoded: any other %XX is literal tenant text
      ['%41', '%41'],
    ])('decodes %j as %j', (scope, tenant) => {
      expect(decodeScope(scope)).toBe(tenant);
    });

    it('decodes the no-tenant scope as null', () => {
      expect(decodeScope('_')).toBeNull();
    });

    it.each(['acme', '_', '%5F', '%25', 'a:{b}%', '%41'])('inverts encodeScope for %j', (tenant) => {
      expect(decodeScope(encodeScope(tenant))).toBe(tenant);
    });
  });

  describe(parsePolicyStateKey.name, () => {
    it.each([
      ['acme', 'svc-42'],
      ['a:b', 'k'],
      ['100%', 'k'],
      ['{x}', 'k'],
      ['_', 'k'],
      ['%5F', 'k'],
      ['a:b{c}%d_', 'x%3Ay:z'],
      ['_', ''],
      [undefined, 'k'],
      [undefined, 'svc-42:evaluate'],
    ])('round-trips policyStateKey of tenant %j and key %j', (tenant, key) => {
      // given the key the engine writes for that tenant and key
      const redisKey = policyStateKey(shardKeys(shardOf(tenant, 64)), encodeScope(tenant), 'p', key);

      // when it is taken apart
      const sut = parsePolicyStateKey(redisKey, 'p');

      // then the tenant (null for none) and the key come back unchanged
      expect(sut).toEqual({ tenant: tenant ?? null, key });
    });

    it.each([
      ['another policy', 'tally:v1:{s1}:pk:q:acme:k'],
      ['a policy that only starts alike', 'tally:v1:{s1}:pk:p2:acme:k'],
      ["a concurrency window's set", 'tally:v1:{s1}:w:p:hourly:acme:k'],
      ['an idempotency key', 'tally:v1:{s1}:idem.sha256:acme:glTDKakoUPbVOd03b0gW7idkUX2l4CNVFK9DMWRIDXo'],
      ['another key version', 'tally:v2:{s1}:pk:p:acme:k'],
      ['no key after the scope', 'tally:v1:{s1}:pk:p:acme'],
    ])('refuses %s', (_, redisKey) => {
      expect(parsePolicyStateKey(redisKey, 'p')).toBeNull();
    });
  });

  it('keeps the append marker of a degraded decision beside its shard outbox (same slot)', () => {
    const decisionId = '01JD0000000000000000000000';
    expect(degradedMarkerKey(shardKeys(7), decisionId)).toBe(`tally:v1:{s7}:degraded:${decisionId}`);
  });

  describe('leases', () => {
    const decisionId = '01JD0000000000000000000000';

    it('names the shard and the decision in the id, and the record in the same slot as the windows', () => {
      expect(leaseIdOf(7, decisionId)).toBe(`s7-${decisionId}`);
      expect(parseLeaseId(`s7-${decisionId}`)).toEqual({ shard: 7, decisionId });
      expect(leaseKey(shardKeys(7), decisionId)).toBe(`tally:v1:{s7}:lease:${decisionId}`);
    });

    it.each([
      '',
      's7',
      `7-${decisionId}`,
      `s7-${decisionId.toLowerCase()}`,
      `s7-${decisionId}x`,
      `s1234567-${decisionId}`,
      `s7-01JD000000000000000000000U`,
    ])('refuses %j as a lease id', (id) => {
      expect(parseLeaseId(id)).toBeNull();
    });
  });

  describe(overridesKey.name, () => {
    it('puts the overrides and their index in the shard slot, fields as <policy>:<scope>:<key>', () => {
      const shard = shardKeys(7);
      expect(overridesKey(shard)).toBe('tally:v1:{s7}:overrides');
      expect(overrideIndexKey(shard)).toBe('tally:v1:{s7}:overrides:index');
      expect(overrideField('tenant-default', encodeScope('a:b'), 'a%3Ab')).toBe('tenant-default:a%3Ab:a%3Ab');
    });
  });
});
