import { Inject, Injectable } from '@nestjs/common';
import { shardKeys } from '@tally/engine';
import { RELAY_OPTIONS, RELAY_REDIS } from './outbox.constants';
import type { RelayRedis } from './relay-redis';
import type { ResolvedRelayOptions } from './relay.options';

const HSCAN_COUNT = 1000;
const HDEL_CHUNK = 1000;

/** One shard's denial coalescing hash, and the lease that makes one relay at a time drain it. */
@Injectable()
export class DenialStore {
  constructor(
    @Inject(RELAY_REDIS) private readonly redis: RelayRedis,
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
  ) {}

  /**
   * Takes the lease when free, or renews it when already ours. The lease saves duplicate work, it is
   * not what prevents double counting: that is the deterministic event id (see planDenialDrain), so a
   * lease that expires mid-drain (a long Kafka stall) costs at most a duplicate event with the same id.
   */
  async acquire(shard: number): Promise<boolean> {
    const key = shardKeys(shard).denialLease;
    const me = this.options.consumerName;
    const ttl = this.options.denialLeaseMs;
    if ((await this.redis.commands.set(key, me, 'PX', ttl, 'NX')) === 'OK') return true;
    if ((await this.redis.commands.get(key)) !== me) return false;
    await this.redis.commands.pexpire(key, ttl);
    return true;
  }

  /** Gives the lease up at shutdown so another relay drains the shard without waiting for expiry. */
  async release(shard: number): Promise<void> {
    const key = shardKeys(shard).denialLease;
    if ((await this.redis.commands.get(key)) === this.options.consumerName)
      await this.redis.commands.del(key);
  }

  /**
   * The shards whose denial hash exists: the decision script creates it with the first denial of a
   * second (HINCRBY) and the drain's last HDEL removes it, so an empty answer means nothing to drain.
   * On a single node one multi-key EXISTS answers the common case (none) in one command.
   */
  async shardsWithDenials(): Promise<number[]> {
    const shards = Array.from({ length: this.options.shards }, (_, shard) => shard);
    const keys = shards.map((shard) => shardKeys(shard).denials);
    const { commands, cluster } = this.redis;
    let exists: number[];
    if (cluster) {
      exists = await Promise.all(keys.map((key) => commands.exists(key)));
    } else {
      if ((await commands.exists(...keys)) === 0) return [];
      const pipeline = commands.pipeline();
      for (const key of keys) pipeline.exists(key);
      exists = ((await pipeline.exec()) ?? []).map(([error, n]) => {
        if (error) throw error;
        return Number(n);
      });
    }
    return shards.filter((_, i) => exists[i] === 1);
  }

  /** Every field of the hash (HSCAN: a flood of distinct denied keys never blocks Redis). */
  async read(shard: number): Promise<Record<string, string>> {
    const key = shardKeys(shard).denials;
    const fields: Record<string, string> = {};
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.commands.hscan(key, cursor, 'COUNT', HSCAN_COUNT);
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
      cursor = next;
    } while (cursor !== '0');
    return fields;
  }

  async delete(shard: number, fields: readonly string[]): Promise<void> {
    const key = shardKeys(shard).denials;
    for (let i = 0; i < fields.length; i += HDEL_CHUNK) {
      await this.redis.commands.hdel(key, ...fields.slice(i, i + HDEL_CHUNK));
    }
  }
}
