import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { allShardKeys } from '@tally/engine';
import { ledgerTopicSpecs, TOPIC_PROVISIONER, type TopicProvisioner } from '@tally/ledger';
import { jitteredBackoffMs, sleep } from '@tally/redis';
import { DenialRelay } from './denial-relay';
import { KafkaPublisher } from './kafka-publisher';
import { planOutboxBatch } from './outbox-batch';
import { OutboxStreams } from './outbox-streams';
import { RELAY_OPTIONS, RELAY_REDIS } from './outbox.constants';
import { backloggedStreams, planReads } from './read-plan';
import { RelayLifecycle } from './relay-lifecycle';
import type { RelayRedis } from './relay-redis';
import { RelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';
import type { StreamEntry } from './stream-entries';

/**
 * Moves every shard's outbox stream to Kafka (DESIGN §4). One loop, one batch in flight:
 * read new entries (XREADGROUP) → publish (idempotent producer, acks=all) → XACK + XDEL; every
 * `claimIntervalMs` it re-claims entries a dead relay left pending, every `denialIntervalMs` it drains
 * the closed seconds of the denial hashes. Several relays share the streams through the consumer
 * group `tally-relay`: Redis hands each new entry to exactly one of them.
 *
 * Delivery into Kafka is at least once, never at most once. The only duplicate is an entry published
 * and not yet acknowledged when its relay died; it is published again, with the same CloudEvents id
 * (the decision id), and the projector deduplicates by id. See `publish` for the order of effects.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly streamKeys: string[];
  private hot = new Set<string>();
  private loop?: Promise<void>;
  private nextClaim = 0;
  private nextDrain = 0;
  private idle = 0;

  constructor(
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
    @Inject(RELAY_REDIS) private readonly redis: RelayRedis,
    @Inject(TOPIC_PROVISIONER) private readonly provisioner: TopicProvisioner,
    private readonly streams: OutboxStreams,
    private readonly publisher: KafkaPublisher,
    private readonly denials: DenialRelay,
    private readonly lifecycle: RelayLifecycle,
    private readonly metrics: RelayMetrics,
  ) {
    this.streamKeys = allShardKeys(options.shards).map((k) => k.outbox);
  }

  /** This relay's consumer name in the group. */
  get consumerName(): string {
    return this.options.consumerName;
  }

  onApplicationBootstrap(): void {
    this.loop = this.run().catch((error: unknown) => {
      this.logger.error(`relay loop stopped: ${error instanceof Error ? error.stack : String(error)}`);
    });
  }

  /** SIGTERM: stop reading, finish the batch in flight (produce + ack), give the denial leases back. */
  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.stop();
    await this.loop;
    await this.denials.releaseAll();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.close();
  }

  private async run(): Promise<void> {
    const specs = ledgerTopicSpecs({
      partitions: this.options.topicPartitions,
      replicationFactor: this.options.topicReplication,
    });
    if (!(await this.lifecycle.retry('provision', () => this.provisioner.ensureTopics(specs)))) return;
    if (!(await this.ensureGroups())) return;
    this.logger.log(
      `relaying ${this.streamKeys.length} outbox streams as consumer ${this.options.consumerName}`,
    );
    while (!this.lifecycle.stopping) {
      const now = performance.now();
      if (now >= this.nextClaim) {
        this.nextClaim = now + this.options.claimIntervalMs;
        await this.reclaim();
      }
      if (now >= this.nextDrain && !this.lifecycle.stopping) {
        this.nextDrain = now + this.options.denialIntervalMs;
        await this.denials
          .drain()
          .catch((e: unknown) => this.logger.warn(`denial drain failed: ${String(e)}`));
      }
      const entries = await this.readNew();
      if (entries === undefined) continue;
      if (entries.length > 0) await this.publish(entries);
      else if (this.redis.cluster) await this.pollPause();
    }
  }

  /** New entries, or undefined after a failed read (already counted and backed off). */
  private async readNew(): Promise<StreamEntry[] | undefined> {
    const calls = planReads(this.streamKeys, this.hot, this.options.batchSize, {
      blockMs: this.options.blockMs,
      perKey: this.redis.cluster,
    });
    try {
      const entries = await this.streams.read(calls);
      this.hot = backloggedStreams(calls, entries);
      this.idle = entries.length > 0 ? 0 : this.idle + 1;
      return entries;
    } catch (error) {
      this.metrics.errors.inc({ stage: 'read' });
      this.logger.warn(`read failed: ${error instanceof Error ? error.message : String(error)}`);
      // A stream deleted by hand (DEL) takes its group with it: recreate, at id 0, and go on.
      if (error instanceof Error && error.message.includes('NOGROUP')) await this.ensureGroups();
      const { retryBaseMs, retryMaxMs, random } = this.options;
      await sleep(jitteredBackoffMs(this.idle++, retryBaseMs, retryMaxMs, random), this.lifecycle.signal);
      return undefined;
    }
  }

  /**
   * Side-effect order of one batch, and what a crash between the steps costs:
   * 1. XREADGROUP delivered the entries to this consumer: they are in its pending list. Dying now
   *    loses nothing: after `claimMinIdleMs` another relay's XAUTOCLAIM takes them over.
   * 2. sendBatch, acks=all, idempotent producer. Until Kafka confirms, nothing else happens (a Kafka
   *    outage keeps this step retrying: the outbox grows, nothing is trimmed or dropped). Dying
   *    mid-send: same as 1; whatever part reached Kafka is sent again, with the same event ids.
   * 3. XACK + XDEL per stream, only after 2 confirmed. Dying between 2 and 3 is the one duplicate:
   *    the entries are re-claimed and published a second time with the same CloudEvents ids (decision
   *    ids), which the projector deduplicates. Kafka holds them at least once, projections once.
   * On shutdown past the grace period step 2 is abandoned: the entries stay pending (as in 1).
   */
  private async publish(entries: readonly StreamEntry[]): Promise<void> {
    const started = performance.now();
    const plan = planOutboxBatch(entries);
    if (!(await this.publisher.publish(plan.topicMessages))) return;
    this.metrics.deadLettered.inc(plan.deadLettered);
    await this.lifecycle.retry('ack', () => this.streams.acknowledge(plan.acks));
    this.metrics.batchSeconds.observe((performance.now() - started) / 1000);
  }

  /**
   * Entries pending in any consumer (this one included) longer than `claimMinIdleMs`: a relay that
   * died between read and ack. Skipped while Kafka is failing: this relay could not publish them
   * either, and taking them would only move them between stuck relays.
   */
  private async reclaim(): Promise<void> {
    if (this.publisher.lastFailure !== undefined) return;
    for (const stream of this.streamKeys) {
      let cursor = '0-0';
      do {
        if (this.lifecycle.stopping) return;
        let claimed;
        try {
          claimed = await this.streams.claim(stream, cursor, this.options.batchSize);
        } catch (error) {
          this.metrics.errors.inc({ stage: 'claim' });
          this.logger.warn(`re-claim of ${stream} failed: ${String(error)}`);
          return;
        }
        if (claimed.deleted.length > 0) {
          // Published and deleted, but the ack was lost: only the pending-list entry remains.
          const deleted = new Map([[stream, claimed.deleted]]);
          await this.lifecycle.retry('ack', () => this.streams.acknowledge(deleted));
        }
        if (claimed.entries.length > 0) {
          this.metrics.reclaimed.inc(claimed.entries.length);
          this.logger.log(`re-claimed ${claimed.entries.length} pending entries of ${stream}`);
          await this.publish(claimed.entries);
        }
        cursor = claimed.next;
      } while (cursor !== '0-0');
    }
  }

  private ensureGroups(): Promise<boolean> {
    return this.lifecycle.retry('groups', () => this.streams.ensureGroups(this.streamKeys));
  }

  /** Cluster polling: no blocking read, so an idle relay backs off up to `pollMaxMs` between polls. */
  private pollPause(): Promise<void> {
    return sleep(Math.min(5 * 2 ** Math.min(this.idle, 10), this.options.pollMaxMs), this.lifecycle.signal);
  }
}
