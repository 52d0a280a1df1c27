import { Injectable } from '@nestjs/common';
import { planDenialDrain } from './denial-drain';
import { DenialStore } from './denial-store';
import { KafkaPublisher } from './kafka-publisher';
import { OutboxStreams } from './outbox-streams';
import { RelayLifecycle } from './relay-lifecycle';
import { RelayMetrics } from './relay.metrics';

/** Turns the closed seconds of every leased shard's denial hash into coalesced decision events. */
@Injectable()
export class DenialRelay {
  private readonly leased = new Set<number>();

  constructor(
    private readonly store: DenialStore,
    private readonly streams: OutboxStreams,
    private readonly publisher: KafkaPublisher,
    private readonly lifecycle: RelayLifecycle,
    private readonly metrics: RelayMetrics,
  ) {}

  /**
   * The shards that have denials to drain (one EXISTS on a single node when there are none: an idle
   * relay costs nothing here). A Redis error is counted and thrown (the next pass asks again).
   */
  async pending(): Promise<number[]> {
    try {
      return await this.store.shardsWithDenials();
    } catch (error) {
      this.metrics.errors.inc({ stage: 'denials' });
      throw error;
    }
  }

  /**
   * One pass over `shards` (from `pending`); a Redis error ends the pass (the next one retries).
   * A shard's lease is taken only when it has denials, so with none no lease is renewed and another
   * relay may take it next time: leases save duplicate work, event ids prevent double counting.
   */
  async drain(shards: readonly number[]): Promise<void> {
    try {
      const nowSecond = Math.floor((await this.streams.timeMs()) / 1000);
      for (const shard of shards) {
        if (this.lifecycle.stopping) return;
        if (!(await this.store.acquire(shard))) {
          this.leased.delete(shard);
          continue;
        }
        this.leased.add(shard);
        if (!(await this.drainShard(shard, nowSecond))) return;
      }
    } catch (error) {
      this.metrics.errors.inc({ stage: 'denials' });
      throw error;
    }
  }

  /**
   * Side-effect order, and what a crash between the steps costs:
   * 1. read the hash (no effect);
   * 2. produce one event per closed (second, policy, key, reason). Dying before Kafka confirmed: the
   *    fields are still in the hash; the next holder of the lease (this relay restarted, or another
   *    one once the lease expired) produces them again;
   * 3. HDEL exactly the fields produced. Dying between 2 and 3 re-produces them next time with the same
   *    deterministic ids, and the projector deduplicates ids: counted once. A closed second is never
   *    written again (the script counts into the current Redis second), so deleting its fields drops
   *    nothing that was not published.
   */
  private async drainShard(shard: number, nowSecond: number): Promise<boolean> {
    const plan = planDenialDrain(shard, nowSecond, await this.store.read(shard));
    if (plan.fields.length === 0) return true;
    if (!(await this.publisher.publish(plan.topicMessages))) return false;
    this.metrics.denials.inc(plan.denials);
    this.metrics.deadLettered.inc(plan.deadLettered);
    return this.lifecycle.retry('denials', () => this.store.delete(shard, plan.fields));
  }

  /** Hands the leases back at shutdown so another relay takes the shards over at once. */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.leased].map((shard) => this.store.release(shard)));
    this.leased.clear();
  }
}
