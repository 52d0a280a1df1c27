/**
 * `ProjectionNamespaces`, the one owner of namespaces, against a REAL private redis-server: the
 * exact keys it writes (the layout is a contract), and the rules the projector and the CLI share.
 */
import { ProjectionKeys, ProjectionNamespaces, NamespaceRefusedError } from '@tally/projections';
import { PrivateRedis } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

describe(ProjectionNamespaces.name, () => {
  let server: PrivateRedis;
  let redis: Redis;
  let sut: ProjectionNamespaces;

  beforeAll(async () => {
    server = await PrivateRedis.start();
    redis = new Redis(server.url);
    sut = new ProjectionNamespaces(redis);
  });

  beforeEach(async () => {
    await redis.flushall();
  });

  afterAll(async () => {
    await redis.quit();
    await server.stop();
  });

  it('makes the first namespace active and keeps it when another projector starts with another default', async () => {
    // when two projectors start, the first with `live`, the second with `other`
    const first = await sut.ensureActive('live', 12);
    const second = await sut.ensureActive('other', 4);
    // then both write into `live`, and both names are registered
    expect([first, second]).toEqual(['live', 'live']);
    expect(await redis.get('tally:proj:active')).toBe('live');
    expect((await redis.smembers('tally:proj:namespaces')).sort()).toEqual(['live', 'other']);
    expect(Number(await redis.hget('tally:proj:{live}:meta', 'created'))).toBeGreaterThan(0);
    // and each keeps the shard count it was created with, whatever a later start proposes
    expect(await redis.hget('tally:proj:{live}:meta', 'shards')).toBe('12');
    expect(await sut.ensureShards('live', 24)).toBe(12);
    expect(await sut.shards('other')).toBe(4);
    expect(await sut.shards('never')).toBe(0);
  });

  it('resolves a query namespace: the named one only when registered and valid, else the active one', async () => {
    await sut.ensureActive('live', 2);
    await sut.ensureActive('other', 2);
    expect(await sut.resolve()).toBe('live');
    expect(await sut.resolve('other')).toBe('other');
    expect(await sut.resolve('missing')).toBeNull();
    expect(await sut.resolve('NOT VALID')).toBeNull();
  });

  it('records a replay: running with its coverage, then complete with the end of partitions left empty', async () => {
    // given a replay of [1000, 5000) in 2 shards whose steps stored the offset of partition 0 only
    await sut.beginReplay('r1', { startedMs: 9000, coveredFrom: 1000, coveredTo: 5000, shards: 2 });
    expect(await sut.list()).toEqual([
      { name: 'r1', active: false, events: 0, updated: null, shards: 2, replay: 'running' },
    ]);
    await redis.hset(new ProjectionKeys('r1', 0).offsets(), 't:0', '42');
    // when it completes with the range's ends of three partitions
    await sut.completeReplay('r1', [
      { topic: 't', partition: 0, offset: '50' },
      { topic: 't', partition: 1, offset: '7' },
      { topic: 't', partition: 2, offset: '8' },
    ]);
    // then a stored offset is never overwritten, the empty partitions record their end in their shard
    expect(await redis.hgetall('tally:proj:{r1:s0}:offsets')).toEqual({ 't:0': '42', 't:2': '8' });
    expect(await redis.hgetall('tally:proj:{r1:s1}:offsets')).toEqual({ 't:1': '7' });
    expect(await redis.hgetall('tally:proj:{r1}:meta')).toEqual({
      created: '9000',
      replay: 'complete',
      covered_from: '1000',
      covered_to: '5000',
      shards: '2',
    });
    expect(await sut.coverage('r1')).toEqual({ from: 1000, to: 5000 });
    expect((await sut.storedOffsets('r1')).sort((a, b) => a.partition - b.partition)).toEqual([
      { topic: 't', partition: 0, offset: '42' },
      { topic: 't', partition: 1, offset: '7' },
      { topic: 't', partition: 2, offset: '8' },
    ]);
  });

  it('lists a namespace with the events and the latest write of all its shards', async () => {
    await sut.ensureActive('live', 3);
    await redis.hset('tally:proj:{live:s0}:meta', { events: '5', updated: '1000' });
    await redis.hset('tally:proj:{live:s2}:meta', { events: '7', updated: '3000' });
    expect(await sut.list()).toEqual([
      { name: 'live', active: true, events: 12, updated: new Date(3000).toISOString(), shards: 3 },
    ]);
  });

  it('refuses to switch to an unknown or half-replayed namespace unless forced', async () => {
    await sut.ensureActive('live', 1);
    await sut.beginReplay('r2', { startedMs: 1, coveredFrom: 0, coveredTo: 1, shards: 1 });
    await expect(sut.switchTo('nope')).rejects.toThrow(new NamespaceRefusedError('no namespace nope'));
    await expect(sut.switchTo('r2')).rejects.toThrow(
      'namespace r2 is not complete (replay running); use --force to switch anyway',
    );
    expect(await sut.active()).toBe('live');
    expect(await sut.switchTo('r2', true)).toEqual({ previous: 'live', active: 'r2' });
    expect(await redis.get('tally:proj:active')).toBe('r2');
  });

  it('drops every key of an inactive namespace, in every shard, never the active one', async () => {
    await sut.ensureActive('live', 1);
    await sut.beginReplay('old', { startedMs: 1, coveredFrom: 0, coveredTo: 1, shards: 2 });
    await sut.storeOffsets('old', [
      { topic: 't', partition: 3, offset: '9' },
      { topic: 't', partition: 4, offset: '9' },
    ]);
    // a key of layout 1 goes too, and nothing of a namespace whose name starts alike
    await redis.hset('tally:proj:{old}:offsets', 't:0', '1');
    await redis.hset('tally:proj:{old-2:s0}:offsets', 't:0', '1');
    expect(await redis.hgetall('tally:proj:{old:s1}:offsets')).toEqual({ 't:3': '9' });
    await expect(sut.drop('live')).rejects.toThrow('namespace live is active; switch to another one first');
    expect(await sut.drop('old')).toEqual({ keys: 4 });
    expect(await redis.keys('tally:proj:{old}:*')).toEqual([]);
    expect(await redis.keys('tally:proj:{old:*')).toEqual([]);
    expect(await redis.keys('tally:proj:{old-2:*')).toEqual(['tally:proj:{old-2:s0}:offsets']);
    expect(await sut.exists('old')).toBe(false);
    await expect(sut.drop('old')).rejects.toThrow('no namespace old');
  });

  it('counts keys left by an interrupted drop as existing, though unregistered', async () => {
    await redis.hset('tally:proj:{ghost}:offsets', 't:0', '1');
    expect(await sut.isRegistered('ghost')).toBe(false);
    expect(await sut.exists('ghost')).toBe(true);
    expect(await sut.isLegacy('ghost')).toBe(true);
    await redis.hset('tally:proj:{ghost2:s5}:offsets', 't:5', '1');
    expect(await sut.exists('ghost2')).toBe(true);
    expect(await sut.isLegacy('ghost2')).toBe(false);
  });
});
