import { Cluster } from 'ioredis';
import type { RedisClient } from './redis-connection';

/**
 * SCAN over every master (a Cluster's keys are spread over its nodes), sorted and without repeats.
 * Only for operator paths (drop, reconcile): never on the decision's, the projector's or the
 * queries' hot paths.
 */
export async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
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
