import { createRedisClient, type RedisClient, type RedisConnection } from '@tally/redis';

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

/** Worker clients (see `RedisProfile`): nothing is lost while Redis is away, entries stay in the stream. */
export function createRelayRedis(connection: RedisConnection): RelayRedis {
  const reader = createRedisClient(connection, 'worker', 'tally-relay-reader');
  const commands = createRedisClient(connection, 'worker', 'tally-relay');
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
