import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { backoffMs } from './backoff';
import { installLeanPipeline } from './lean-pipeline';
import { installResp2Decoder } from './resp2-decoder';
import type { RedisClient, RedisConnection } from './redis-connection';
import { coalesceWrites } from './write-coalescing';

/**
 * How a client behaves while Redis is away; each lib picks the one its callers can live with.
 * - `hot-path` (decisions): no offline queue — while disconnected a call fails at once (the breaker
 *   and fail modes take over) instead of queueing requests behind a dead connection past their
 *   deadline; one retry per request at most; auto-pipelining off (one connection does ≈ 55–60k
 *   EVALSHA/s without it and ≈ 35k with it); instead, the commands one event-loop turn issues go
 *   out in one socket write per connection, all of them in flight at once (write-coalescing.ts).
 * - `worker` (relay, projector): on nobody's deadline — a command issued while reconnecting waits in
 *   the offline queue and fails only after a reconnect attempt failed too; the worker's own loop then
 *   retries (entries stay in the stream, an unstored batch is read again: nothing is lost).
 *   Auto-pipelining off: their big steps are single EVALSHAs and they pipeline explicitly.
 * - `command` (the CLI): queues until connected (a command runs once, it has no deadline), but gives
 *   up after a few reconnects so that a wrong `--redis-url` fails the command instead of hanging it.
 */
export type RedisProfile = 'hot-path' | 'worker' | 'command';

/** Reconnect with a capped backoff: quick after a blip, at most every 2 s against a dead server. */
export const reconnectBackoff = (times: number): number => backoffMs(times, 50, 2000);

const commandRetry = (times: number): number | null => (times > 3 ? null : 200 * times);

interface Profile {
  /** Options of the client as a whole: on a Cluster they are set at its level, not per node. */
  readonly client: Pick<RedisOptions, 'enableOfflineQueue' | 'enableAutoPipelining'>;
  /** Options of each connection (the server's, or each Cluster node's). */
  readonly connection: Pick<RedisOptions, 'maxRetriesPerRequest' | 'connectTimeout'>;
  readonly retry: (times: number) => number | null;
  /** One socket write per connection per event-loop turn (write-coalescing.ts). */
  readonly coalesce: boolean;
}

const PROFILES: Readonly<Record<RedisProfile, Profile>> = {
  'hot-path': {
    client: { enableOfflineQueue: false, enableAutoPipelining: false },
    connection: { maxRetriesPerRequest: 1, connectTimeout: 2000 },
    retry: reconnectBackoff,
    coalesce: true,
  },
  worker: {
    client: {},
    connection: { maxRetriesPerRequest: 1, connectTimeout: 2000 },
    retry: reconnectBackoff,
    coalesce: false,
  },
  command: {
    client: {},
    connection: { maxRetriesPerRequest: 2, connectTimeout: 3000 },
    retry: commandRetry,
    coalesce: false,
  },
};

/** The one way a Tally process opens Redis. `name` is the CLIENT SETNAME shown by `CLIENT LIST`. */
export function createRedisClient(
  connection: RedisConnection,
  profileName: RedisProfile,
  name?: string,
): RedisClient {
  // Every pipeline this process makes is then free at the next scavenge (lean-pipeline.ts).
  installLeanPipeline();
  // …and every reply is decoded without ioredis's per-field WeakMap lookups (resp2-decoder.ts).
  installResp2Decoder();
  const profile = PROFILES[profileName];
  const perConnection = {
    // RESP2 on purpose, for every profile (docs/adr/0003-redis-resp2.md): ioredis 6 defaults to RESP3
    // and a HELLO at every connect.
    protocol: 2 as const,
    ...(name === undefined ? {} : { connectionName: name }),
    ...profile.connection,
  };
  const client = open(connection, profile, perConnection);
  if (profile.coalesce) coalesceWrites(client);
  return client;
}

function open(connection: RedisConnection, profile: Profile, perConnection: RedisOptions): RedisClient {
  if (connection.mode === 'single') {
    return new Redis(connection.url, { ...profile.client, ...perConnection, retryStrategy: profile.retry });
  }
  return new Cluster(
    connection.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      ...profile.client,
      scaleReads: 'master',
      clusterRetryStrategy: profile.retry,
      redisOptions: {
        ...perConnection,
        username: connection.username,
        password: connection.password,
        ...(connection.tls === true ? { tls: {} } : {}),
      },
    },
  );
}
