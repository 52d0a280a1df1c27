import { HostPort, parseHostPort } from './host-port';

/** Where Redis is: one node (an ioredis URL) or the seed nodes of a Redis Cluster. */
export type RedisTarget =
  | { readonly mode: 'single'; readonly url: string }
  | {
      readonly mode: 'cluster';
      readonly nodes: readonly HostPort[];
      readonly username?: string;
      readonly password?: string;
      readonly tls: boolean;
    };

const DEFAULT_REDIS_PORT = 6379;
const CLUSTER_SCHEME = /^(rediss?)\+cluster:\/\/(.*)$/;

/**
 * Accepted forms:
 * - `redis://[user:pass@]host[:port][/db]`, `rediss://…` → one node;
 * - `redis+cluster://[user:pass@]h1:p1,h2:p2` (`rediss+cluster://` for TLS) → Cluster seeds;
 * - `h1:p1,h2:p2` (two or more, no scheme) → Cluster seeds.
 * A single bare `host:port` is refused: it is ambiguous between a node and a one-seed cluster.
 */
export function parseRedisTarget(text: string): RedisTarget | undefined {
  const value = text.trim();
  if (value.startsWith('redis://') || value.startsWith('rediss://')) return parseSingle(value);
  const cluster = CLUSTER_SCHEME.exec(value);
  if (cluster) return parseCluster(cluster[2], cluster[1] === 'rediss');
  if (!value.includes('://') && value.includes(',')) {
    const nodes = parseNodes(value);
    return nodes && { mode: 'cluster', nodes, tls: false };
  }
  return undefined;
}

function parseSingle(value: string): RedisTarget | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.hostname === '') return undefined;
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d+$/.test(url.pathname)) return undefined;
  return { mode: 'single', url: value };
}

function parseCluster(rest: string, tls: boolean): RedisTarget | undefined {
  const at = rest.lastIndexOf('@');
  const hosts = at < 0 ? rest : rest.slice(at + 1);
  const nodes = parseNodes(hosts.replace(/\/$/, ''));
  if (!nodes) return undefined;
  if (at < 0) return { mode: 'cluster', nodes, tls };
  const [user, ...pass] = rest.slice(0, at).split(':');
  const username = user === '' ? undefined : decodeURIComponent(user);
  const password = pass.length === 0 ? undefined : decodeURIComponent(pass.join(':'));
  return { mode: 'cluster', nodes, tls, username, password };
}

function parseNodes(list: string): HostPort[] | undefined {
  const parts = list.split(',').map((p) => p.trim());
  const nodes = parts.map((p) => parseHostPort(p, DEFAULT_REDIS_PORT));
  if (parts.length === 0 || nodes.some((n) => n === undefined)) return undefined;
  return nodes as HostPort[];
}
