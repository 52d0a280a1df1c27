import type { RedisTarget } from '@tally/config';
import { Cluster, Redis } from 'ioredis';

export type OpsRedis = Redis | Cluster;

/**
 * A client for operator commands. Unlike the hot path's client it queues commands until connected
 * (a command runs once, it has no deadline to keep), but gives up after a few reconnects so that a
 * wrong `--redis-url` fails the command instead of hanging it.
 */
export function openRedis(target: RedisTarget): OpsRedis {
  const retryStrategy = (times: number): number | null => (times > 3 ? null : 200 * times);
  // RESP2 on purpose (docs/adr/0003-redis-resp2.md): ioredis 6 defaults to RESP3 and a HELLO.
  const protocol = 2 as const;
  if (target.mode === 'single') {
    return new Redis(target.url, { protocol, maxRetriesPerRequest: 2, connectTimeout: 3000, retryStrategy });
  }
  return new Cluster(
    target.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      scaleReads: 'master',
      clusterRetryStrategy: retryStrategy,
      redisOptions: {
        protocol,
        maxRetriesPerRequest: 2,
        connectTimeout: 3000,
        username: target.username,
        password: target.password,
        ...(target.tls ? { tls: {} } : {}),
      },
    },
  );
}

/** SCAN over every master (a Cluster's keys are spread over its nodes). */
export async function scanKeys(redis: OpsRedis, pattern: string): Promise<string[]> {
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
export async function redisNowMs(redis: OpsRedis): Promise<number> {
  const [seconds, micros] = await (redis instanceof Cluster ? redis.nodes('master')[0] : redis).time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
