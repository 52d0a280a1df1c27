import { describe, expect, it } from 'vitest';
import {
  ACTIVE_NAMESPACE_KEY,
  bucketToken,
  dedupTokenOf,
  encodeKeyPart,
  isValidNamespace,
  NAMESPACES_KEY,
  offsetField,
  parseBucketToken,
  parseOffsetField,
  parseUsageField,
  parseUsageKey,
  MAX_SHARDS,
  NamespaceKeys,
  ProjectionKeys,
  shardOfPartition,
  shardsForPartitions,
  usageField,
} from './projection-keys';
import type { LedgerEvent } from '@tally/events';

const AT = Date.parse('2026-11-30T09:41:27.500Z');

describe(ProjectionKeys.name, () => {
  const sut = new ProjectionKeys('live-1', 3);

  it('builds every key of the layout exactly', () => {
    expect(ACTIVE_NAMESPACE_KEY).toBe('tally:proj:active');
    expect(NAMESPACES_KEY).toBe('tally:proj:namespaces');
    expect(sut.meta()).toBe('tally:proj:{live-1:s3}:meta');
    expect(sut.offsets()).toBe('tally:proj:{live-1:s3}:offsets');
    expect(sut.versions()).toBe('tally:proj:{live-1:s3}:versions');
    expect(sut.ids(AT)).toBe('tally:proj:{live-1:s3}:ids:20261130T0900Z');
    expect(sut.usage('acme', 'minute', AT)).toBe('tally:proj:{live-1:s3}:usage:acme:minute:20261130T0941Z');
    expect(sut.usage('acme', 'hour', AT)).toBe('tally:proj:{live-1:s3}:usage:acme:hour:20261130T0900Z');
    expect(sut.usage('acme', 'day', AT)).toBe('tally:proj:{live-1:s3}:usage:acme:day:20261130T0000Z');
    expect(sut.usage('acme', 'month', AT)).toBe('tally:proj:{live-1:s3}:usage:acme:month:20261101T0000Z');
    expect(sut.keyUsage('acme', 'notary', 'hour', AT)).toBe(
      'tally:proj:{live-1:s3}:keys:acme:notary:hour:20261130T0900Z',
    );
    expect(sut.audit('acme')).toBe('tally:proj:{live-1:s3}:audit:acme');
    expect(sut.all()).toBe('tally:proj:{live-1:s3}:*');
    expect(sut.allUsage()).toBe('tally:proj:{live-1:s3}:usage:*');
  });

  it('writes "~" for no tenant (tenant-less requests and the global policy-reload trail)', () => {
    expect(sut.usage(null, 'day', AT)).toBe('tally:proj:{live-1:s3}:usage:~:day:20261130T0000Z');
    expect(sut.audit(null)).toBe('tally:proj:{live-1:s3}:audit:~');
  });

  it('encodes free-text tenants so a key always splits on ":" the same way', () => {
    expect(sut.audit('a:b/c d~*?[x]')).toBe('tally:proj:{live-1:s3}:audit:a%3Ab%2Fc%20d%7E%2A%3F%5Bx%5D');
    expect(sut.audit('~')).not.toBe(sut.audit(null));
    expect(sut.audit('ümlaut')).toBe('tally:proj:{live-1:s3}:audit:%C3%BCmlaut');
  });

  it.each(['', 'Live', 'a b', 'x:y', '{ns}', '-lead', 'a'.repeat(64)])('refuses namespace %j', (ns) => {
    expect(() => new ProjectionKeys(ns, 0)).toThrow(RangeError);
    expect(() => new NamespaceKeys(ns)).toThrow(RangeError);
    expect(isValidNamespace(ns)).toBe(false);
  });
});

describe(NamespaceKeys.name, () => {
  const sut = new NamespaceKeys('live-1');

  it('builds the namespace-wide keys and the patterns that find its shards', () => {
    expect(sut.meta()).toBe('tally:proj:{live-1}:meta');
    expect(sut.legacyOffsets()).toBe('tally:proj:{live-1}:offsets');
    expect(sut.all()).toBe('tally:proj:{live-1}:*');
    expect(sut.allShards()).toBe('tally:proj:{live-1:s*');
    expect(sut.shard(7).offsets()).toBe('tally:proj:{live-1:s7}:offsets');
  });

  it('refuses shards outside 0 .. MAX_SHARDS - 1', () => {
    for (const shard of [-1, 1.5, MAX_SHARDS, Number.NaN]) {
      expect(() => new ProjectionKeys('live', shard)).toThrow(RangeError);
    }
  });
});

describe(shardOfPartition.name, () => {
  it('keeps a key in its shard when the partitions grow to a multiple of the shard count', () => {
    // given: a key hashing to h is in partition h mod P; 12 shards, topics grown from 12 to 24 and 36
    for (let h = 0; h < 10_000; h += 7) {
      const before = shardOfPartition(h % 12, 12);
      // then: whatever the partition count (a multiple of 12), the shard is the same
      expect(shardOfPartition(h % 24, 12)).toBe(before);
      expect(shardOfPartition(h % 36, 12)).toBe(before);
    }
  });

  it('moves some keys when the growth is not to a multiple (what docs/operations.md warns of)', () => {
    const moved = Array.from({ length: 1000 }, (_, h) => h).filter(
      (h) => shardOfPartition(h % 12, 12) !== shardOfPartition(h % 18, 12),
    );
    expect(moved.length).toBeGreaterThan(0);
  });
});

describe(shardsForPartitions.name, () => {
  it.each([
    [[12, 12], 12],
    [[12, 24], 12],
    [[12, 18], 6],
    [[1, 12], 1],
    [[7], 7],
    [[], 1],
  ])('shards of topics of %j partitions: %i', (counts, shards) => {
    expect(shardsForPartitions(counts)).toBe(shards);
  });
});

describe(parseUsageKey.name, () => {
  const keys = new ProjectionKeys('replay_2', 11);

  it.each([
    ['acme', 'minute'],
    ['a:b/c d~', 'hour'],
    [null, 'month'],
  ] as const)('reads back what ProjectionKeys wrote (tenant %j, %s)', (tenant, granularity) => {
    const start = Date.parse(granularity === 'month' ? '2026-11-01T00:00:00Z' : '2026-11-30T09:00:00Z');
    expect(parseUsageKey(keys.usage(tenant, granularity, start))).toEqual({
      namespace: 'replay_2',
      shard: 11,
      tenant,
      granularity,
      start,
    });
  });

  it.each([
    'tally:proj:{n:s0}:keys:acme:p:hour:20261130T0900Z',
    'tally:proj:{n:s0}:usage:acme:week:20261130T0900Z',
    'tally:proj:{n:s0}:usage:acme:hour:20261130T0960Z',
    'tally:proj:{n:s0}:usage::hour:20261130T0900Z',
    'tally:proj:{n:s0}:usage:%E0%A4%A:hour:20261130T0900Z',
    'tally:proj:n:usage:acme:hour:20261130T0900Z',
    'tally:proj:{n}:usage:acme:hour:20261130T0900Z',
    'tally:proj:{n:s01}:usage:acme:hour:20261130T0900Z',
    'tally:proj:{n:sx}:usage:acme:hour:20261130T0900Z',
  ])('refuses %s', (key) => {
    expect(parseUsageKey(key)).toBeNull();
  });
});

describe(bucketToken.name, () => {
  it('is ISO 8601 basic to the minute and round-trips', () => {
    expect(bucketToken(Date.parse('2024-02-29T23:59:00Z'))).toBe('20240229T2359Z');
    expect(parseBucketToken('20240229T2359Z')).toBe(Date.parse('2024-02-29T23:59:00Z'));
  });

  it.each(['20230229T0000Z', '20261130T2400Z', '2026-11-30T09:00Z', '20261130T0900'])(
    'refuses %s',
    (token) => {
      expect(parseBucketToken(token)).toBeNull();
    },
  );
});

describe(usageField.name, () => {
  it('prefixes the metric, and the name keeps any ":" it has', () => {
    expect(usageField('cost', 'notary')).toBe('cost:notary');
    expect(usageField('count', 'svc:42')).toBe('count:svc:42');
    expect(parseUsageField('count:svc:42')).toEqual({ metric: 'count', name: 'svc:42' });
    expect(parseUsageField('cost:')).toEqual({ metric: 'cost', name: '' });
    expect(parseUsageField('sum:x')).toBeNull();
    expect(parseUsageField('cost')).toBeNull();
  });
});

describe(offsetField.name, () => {
  it('is topic:partition and parses back', () => {
    expect(offsetField('tally.usage.v1', 11)).toBe('tally.usage.v1:11');
    expect(parseOffsetField('tally.usage.v1:11')).toEqual({ topic: 'tally.usage.v1', partition: 11 });
    expect(parseOffsetField('tally.usage.v1')).toBeNull();
    expect(parseOffsetField('t:-1')).toBeNull();
  });
});

describe(dedupTokenOf.name, () => {
  it('tells the usage and the decision event of one decision apart', () => {
    const id = '01JD5Z8M3KQ7W4X9T2B6N0R1CE';
    expect(dedupTokenOf({ type: 'tally.usage.v1', id } as LedgerEvent)).toBe(`u:${id}`);
    expect(dedupTokenOf({ type: 'tally.decision.v1', id } as LedgerEvent)).toBe(`d:${id}`);
  });
});

describe(encodeKeyPart.name, () => {
  it('leaves plain names readable', () => {
    expect(encodeKeyPart('acme-corp_1.eu')).toBe('acme-corp_1.eu');
  });
});
