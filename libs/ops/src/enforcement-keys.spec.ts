import { encodeScope, shardKeys, shardOf, windowKey } from '@tally/engine';
import { describe, expect, it } from 'vitest';
import { decodeScope, parseWindowKey, windowKeyPattern } from './enforcement-keys';

describe(parseWindowKey.name, () => {
  it.each([
    ['acme', 'svc-42'],
    ['a:b{c}%d', 'x%3Ay'],
    ['_', ''],
    [undefined, 'k'],
  ])('takes apart the engine key of tenant %j and key %j', (tenant, key) => {
    const redisKey = windowKey(shardKeys(shardOf(tenant, 64)), encodeScope(tenant), 'p', 'hourly', key);

    const sut = parseWindowKey(redisKey, 'p', 'hourly');

    expect(sut).toEqual({ tenant: tenant ?? null, key });
  });

  it('refuses a key of another window', () => {
    expect(parseWindowKey('tally:v1:{s1}:w:p:daily:acme:k', 'p', 'hourly')).toBeNull();
    expect(parseWindowKey('tally:v1:{s1}:idem:acme:k', 'p', 'hourly')).toBeNull();
  });
});

describe(windowKeyPattern.name, () => {
  it('matches every shard, or the one tenant with glob characters escaped', () => {
    expect(windowKeyPattern('p', 'hourly')).toBe('tally:v1:{s*}:w:p:hourly:*');
    const shard = shardOf('a*b', 64);
    expect(windowKeyPattern('p', 'hourly', { name: 'a*b', shards: 64 })).toBe(
      `tally:v1:{s${shard}}:w:p:hourly:a\\*b:*`,
    );
  });
});

describe(decodeScope.name, () => {
  it('inverts encodeScope', () => {
    for (const tenant of ['acme', '_', '%5F', 'a:{b}%'])
      expect(decodeScope(encodeScope(tenant))).toBe(tenant);
    expect(decodeScope('_')).toBeNull();
  });
});
