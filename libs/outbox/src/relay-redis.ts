import type { RedisConnection } from '@tally/engine';
import { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * The relay's two connections: `reader` for XREADGROUP (which may block for `blockMs`, so nothing
 * else waits behind it) and `commands` for everything else (acks, claims, denials, metrics, health).
 */
export interface RelayRedis {
  readonly reader: RedisClient;
  readonly commands: RedisClient;
  /** Redis Cluster: a command may only name keys of one slot. */
  readonly cluster: boolean;
  close(): Promise<void>;
}

const backoff = (times: number): number => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * Unlike the hot path, the relay is not on anyone's deadline: a command issued while reconnecting
 * waits in the offline queue, and fails only after a reconnect attempt has failed too; the relay's
 * own loop then backs off and retries. Nothing is lost either way: entries stay in the stream.
 */
export function createRelayRedis(connection: RedisConnection): RelayRedis {
  const make = (name: string): RedisClient => {
    // RESP2 on purpose (docs/adr/0003-redis-resp2.md): ioredis 6 defaults to RESP3 and a HELLO.
    const common = {
      protocol: 2 as const,
      connectionName: name,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
    };
    if (connection.mode === 'single') {
      return new Redis(connection.url, { ...common, retryStrategy: backoff });
    }
    return new Cluster(
      connection.nodes.map((n) => ({ host: n.host, port: n.port })),
      {
        scaleReads: 'master',
        clusterRetryStrategy: backoff,
        redisOptions: {
          ...common,
          username: connection.username,
          password: connection.password,
          ...(connection.tls === true ? { tls: {} } : {}),
        },
      },
    );
  };
  const reader = make('tally-relay-reader');
  const commands = make('tally-relay');
  return {
    reader,
    commands,
    cluster: connection.mode === 'cluster',
    async close() {
      await Promise.allSettled([reader.quit(), commands.quit()]);
      reader.disconnect();
      commands.disconnect();
    },
  };
}
