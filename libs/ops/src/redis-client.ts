import { Cluster } from 'ioredis';
import type { RedisClient } from '@tally/redis';

/** Milliseconds of the Redis server clock: the engine decides with it, so reseed must use it too. */
export async function redisNowMs(redis: RedisClient): Promise<number> {
  const [seconds, micros] = await (redis instanceof Cluster ? redis.nodes('master')[0] : redis).time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
