import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './decide.script';

/** Where Redis is; `RedisTarget` of @tally/config has this shape. */
export type RedisConnection =
  | { readonly mode: 'single'; readonly url: string }
  | {
      readonly mode: 'cluster';
      readonly nodes: readonly { readonly host: string; readonly port: number }[];
      readonly username?: string;
      readonly password?: string;
      readonly tls?: boolean;
    };

/** Reconnect with a capped backoff: quick after a blip, at most every 2 s against a dead server. */
const backoff = (times: number): number => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * The hot-path client. Choices, each measured or forced by the failure modes (DESIGN §3, §7):
 * - no offline queue: while disconnected a call fails at once (the breaker and fail modes take
 *   over) instead of queueing requests behind a dead connection past their deadline;
 * - one retry per request at most: a decision must answer within its deadline, not eventually;
 * - auto-pipelining off: one connection does ≈ 55–60k EVALSHA/s without it and ≈ 35k with it.
 */
export function createRedis(connection: RedisConnection): RedisClient {
  const common = {
    // RESP2 on purpose (docs/adr/0003-redis-resp2.md): ioredis 6 defaults to RESP3 and a HELLO.
    protocol: 2 as const,
    enableOfflineQueue: false,
    enableAutoPipelining: false,
  };
  if (connection.mode === 'single') {
    return new Redis(connection.url, {
      ...common,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: backoff,
    });
  }
  return new Cluster(
    connection.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      ...common,
      scaleReads: 'master',
      clusterRetryStrategy: backoff,
      redisOptions: {
        protocol: 2 as const,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        username: connection.username,
        password: connection.password,
        ...(connection.tls ? { tls: {} } : {}),
      },
    },
  );
}
