import { Cluster } from 'ioredis';
import type { RedisClient } from '@tally/redis';

/** SCAN over every master (a Cluster's keys are spread over its nodes). */
export async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...new Set(keys)].sort();
}

/** Milliseconds of the Redis server clock: the engine decides with it, so reseed must use it too. */
export async function redisNowMs(redis: RedisClient): Promise<number> {
  const [seconds, micros] = await (redis instanceof Cluster ? redis.nodes('master')[0] : redis).time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
