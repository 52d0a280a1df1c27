import type { RedisTarget } from '@tally/config';
import { Cluster, Redis } from 'ioredis';
import type { ProjectionRedis } from './apply-batch.script';

const backoff = (times: number): number => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * The projector's client. Not on anyone's deadline: a command issued while reconnecting waits in the
 * offline queue and fails only after a reconnect attempt failed too; the consumer then retries the
 * batch (nothing was stored, so nothing is lost). Auto-pipelining stays off: a batch step is one big
 * EVALSHA, and queries pipeline explicitly.
 */
export function createProjectionRedis(target: RedisTarget, name = 'tally-projector'): ProjectionRedis {
  // RESP2 on purpose (docs/adr/0003-redis-resp2.md): ioredis 6 defaults to RESP3 and a HELLO.
  const common = {
    protocol: 2 as const,
    connectionName: name,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  };
  if (target.mode === 'single') return new Redis(target.url, { ...common, retryStrategy: backoff });
  return new Cluster(
    target.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      scaleReads: 'master',
      clusterRetryStrategy: backoff,
      redisOptions: {
        ...common,
        username: target.username,
        password: target.password,
        ...(target.tls ? { tls: {} } : {}),
      },
    },
  );
}
