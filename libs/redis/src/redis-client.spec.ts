import { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisClient } from './redis-connection';
import { createRedisClient, reconnectBackoff } from './redis-client';

// Port 1: nothing listens; the clients are only inspected, then disconnected.
const SINGLE = { mode: 'single', url: 'redis://127.0.0.1:1' } as const;
const CLUSTER = {
  mode: 'cluster',
  nodes: [{ host: '127.0.0.1', port: 1 }],
  username: 'u',
  password: 'p',
  tls: true,
} as const;

describe(createRedisClient.name, () => {
  const opened: RedisClient[] = [];
  const open = (client: RedisClient): RedisClient => (opened.push(client), client);
  afterEach(() => {
    for (const c of opened.splice(0)) c.disconnect();
  });

  it('hot-path: no offline queue, no auto-pipelining, one retry, 2 s connect timeout', () => {
    const sut = open(createRedisClient(SINGLE, 'hot-path')) as Redis;
    expect(sut).toBeInstanceOf(Redis);
    expect(sut.options).toMatchObject({
      protocol: 2, // RESP2 under every profile (docs/adr/0003-redis-resp2.md)
      enableOfflineQueue: false,
      enableAutoPipelining: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: reconnectBackoff,
    });
  });

  it('worker: queues offline, named, one retry', () => {
    const sut = open(createRedisClient(SINGLE, 'worker', 'tally-relay')) as Redis;
    expect(sut.options).toMatchObject({
      protocol: 2, // RESP2 under every profile (docs/adr/0003-redis-resp2.md)
      enableOfflineQueue: true,
      enableAutoPipelining: false,
      connectionName: 'tally-relay',
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
    });
  });

  it('command: two retries, 3 s connect timeout, gives up after the third reconnect', () => {
    const sut = open(createRedisClient(SINGLE, 'command')) as Redis;
    expect(sut.options).toMatchObject({
      protocol: 2, // RESP2 under every profile (docs/adr/0003-redis-resp2.md)
      enableOfflineQueue: true,
      maxRetriesPerRequest: 2,
      connectTimeout: 3000,
    });
    expect([1, 2, 3, 4].map((t) => sut.options.retryStrategy?.(t))).toEqual([200, 400, 600, null]);
  });

  it('cluster: client options at the Cluster level, connection options and credentials per node', () => {
    const sut = open(createRedisClient(CLUSTER, 'hot-path')) as Cluster;
    expect(sut).toBeInstanceOf(Cluster);
    expect(sut.options).toMatchObject({
      enableOfflineQueue: false,
      enableAutoPipelining: false,
      scaleReads: 'master',
      clusterRetryStrategy: reconnectBackoff,
      redisOptions: {
        protocol: 2,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        username: 'u',
        password: 'p',
        tls: {},
      },
    });
  });
});

describe('reconnectBackoff', () => {
  it('doubles from 100 ms and stays at 2 s', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(reconnectBackoff)).toEqual([100, 200, 400, 800, 1600, 2000, 2000]);
  });
});
