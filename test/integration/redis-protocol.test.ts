/**
 * The RESP protocol is chosen, not inherited (docs/adr/0003-redis-resp2.md): ioredis 6 speaks RESP3
 * (with a HELLO at connect) unless told otherwise. The one production client factory
 * (`createRedisClient` in @tally/redis) connects with RESP2 under every profile, the wire protocol the
 * scripts were written, tested and benchmarked with. Real Redis.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedisClient } from '@tally/redis';

type Client = Pick<Redis, 'call' | 'quit'>;
const opened: Client[] = [];
const open = <T extends Client>(client: T): T => {
  opened.push(client);
  return client;
};
afterAll(async () => {
  await Promise.all(opened.map((c) => c.quit()));
});

/** What the server says this connection speaks (`CLIENT INFO`, Redis ≥ 6.2). */
async function resp(client: Client): Promise<string | undefined> {
  const info = String(await client.call('CLIENT', 'INFO'));
  return /\bresp=(\d)/.exec(info)?.[1];
}

describe('Redis protocol of the client factory', () => {
  const url = (): string => inject('redisUrl');

  it.each([
    ['hot-path (engine: decision API)', () => createRedisClient({ mode: 'single', url: url() }, 'hot-path')],
    ['command (ops: CLI)', () => createRedisClient({ mode: 'single', url: url() }, 'command')],
    [
      'worker (projections: projector; outbox: relay)',
      () => createRedisClient({ mode: 'single', url: url() }, 'worker', 'tally-projector'),
    ],
  ])('%s connects with RESP2', async (_name, make) => {
    const sut = open(make() as unknown as Redis);
    await sut.call('PING').catch(() => undefined); // the engine's client has no offline queue

    await expect.poll(() => resp(sut), { timeout: 10_000 }).toBe('2');
  });

  // Measured with ioredis 6 on Redis 7: under the default `legacy` reply mapping every script reply
  // shape is the same under RESP2 and RESP3; only `replyMapping: 'resp3'` changes them. The table
  // pins both facts, so a later switch of protocol or mapping is a decision, not an accident.
  it.each([
    ['return false', null],
    ['return true', 1],
    ["return {1, false, 'x'}", [1, null, 'x']],
    ['return {double=1.5}', '1.5'],
    ['return {map={a=1}}', ['a', 1]],
    ["return redis.call('GET', 'tally-test:absent')", null],
  ])('%s: the same reply under RESP2 and RESP3 (legacy mapping)', async (script, expected) => {
    const resp2 = open(new Redis(url(), { protocol: 2 }));
    const resp3 = open(new Redis(url(), { protocol: 3 }));

    expect(await resp2.eval(script, 0)).toEqual(expected);
    expect(await resp3.eval(script, 0)).toEqual(expected);
    expect(await resp(resp3)).toBe('3');
  });

  it('the resp3 mapping would change script replies (doubles as numbers, maps as objects)', async () => {
    const sut = open(new Redis(url(), { protocol: 3, replyMapping: 'resp3' }));

    expect(await sut.eval('return {double=1.5}', 0)).toBe(1.5);
    expect(await sut.eval('return {map={a=1}}', 0)).toEqual({ a: 1 });
  });

  it('a RESP3 client in the same process decodes as ioredis does, beside the RESP2 decoder', async () => {
    // given: the factory's RESP2 decoder is in place (docs/adr/0015-resp2-reply-decoder.md)
    const resp2 = open(createRedisClient({ mode: 'single', url: url() }, 'command') as unknown as Redis);
    const resp3 = open(new Redis(url(), { protocol: 3, replyMapping: 'resp3' }));
    const key = `tally-test:resp3:${process.pid}`;
    await resp2.hset(key, 'a', '1', 'b', 'é');

    // then: RESP3 maps, doubles and errors still decode, and the RESP2 client is unaffected
    expect(await resp3.hgetall(key)).toEqual({ a: '1', b: 'é' });
    expect(await resp3.eval('return {double=2.5}', 0)).toBe(2.5);
    await expect(resp3.call('NOSUCHCOMMAND')).rejects.toThrow(/unknown command/);
    expect(await resp2.hgetall(key)).toEqual({ a: '1', b: 'é' });
    const [[readError, read], [incrError]] = (await resp2.pipeline().hget(key, 'b').incr(key).exec()) ?? [];
    expect([readError, read]).toEqual([null, 'é']);
    expect(incrError).toEqual(expect.objectContaining({ message: expect.stringMatching(/^WRONGTYPE/) }));
    await resp2.del(key);
  });
});
