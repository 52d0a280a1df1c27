import type { Cluster } from 'ioredis';
import { CLUSTER_SLOTS, keySlot } from './key-slot';
import { shardKeys } from './keys';
import { SINGLE_NODE } from '../failure/node-breakers';

/** The node of a Cluster slot whose master the client does not know (yet): they share a breaker. */
export const UNKNOWN_NODE = 'unknown';

/**
 * Which Redis node a step goes to, as the client will route it: on Cluster the master its slot map
 * names for the slot (`host:port`), on a single Redis the one node. Read at each step, so after a
 * failover (the client refreshed its map) the promoted replica is named.
 */
export class RedisNodes {
  /** The slot of each shard's hash tag, computed on first use. */
  private readonly shardSlots: number[] = [];

  constructor(private readonly cluster: Cluster | undefined) {}

  ofShard(shard: number): string {
    if (this.cluster === undefined) return SINGLE_NODE;
    const slot = (this.shardSlots[shard] ??= keySlot(shardKeys(shard).base));
    return this.cluster.slots[slot]?.[0] ?? UNKNOWN_NODE;
  }

  ofKey(key: string): string {
    if (this.cluster === undefined) return SINGLE_NODE;
    return this.cluster.slots[keySlot(key)]?.[0] ?? UNKNOWN_NODE;
  }

  /** The nodes serving slots now (`unknown` while a slot has no master in the map). */
  serving(): string[] {
    if (this.cluster === undefined) return [SINGLE_NODE];
    const nodes = new Set<string>();
    const slots = this.cluster.slots;
    for (let slot = 0; slot < CLUSTER_SLOTS; slot++) nodes.add(slots[slot]?.[0] ?? UNKNOWN_NODE);
    return [...nodes];
  }
}
