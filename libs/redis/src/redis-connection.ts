import type { Cluster, Redis } from 'ioredis';

/** A client of one Redis server or of a Redis Cluster: every lib that talks to Redis takes either. */
export type RedisClient = Redis | Cluster;

/** Where Redis is. `RedisTarget` of @tally/config (what `REDIS_URL` parses to) has this shape. */
export type RedisConnection =
  | { readonly mode: 'single'; readonly url: string }
  | {
      readonly mode: 'cluster';
      readonly nodes: readonly { readonly host: string; readonly port: number }[];
      readonly username?: string;
      readonly password?: string;
      readonly tls?: boolean;
    };
