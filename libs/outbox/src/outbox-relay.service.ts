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
import { BatchPipeline } from './batch-pipeline';
import { planOutboxBatch, type OutboxBatchPlan } from './outbox-batch';
import { OutboxStreams } from './outbox-streams';
import { endRecordSpans, RecordSpans } from './record-spans';
import { RELAY_OPTIONS, RELAY_REDIS } from './outbox.constants';
import { backloggedStreams, planReads } from './read-plan';
import { RelayLifecycle } from './relay-lifecycle';
import type { RelayRedis } from './relay-redis';
import { RelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';
import type { StreamEntry } from './stream-entries';
import type { Span } from '@tally/observability';

/**
 * Moves every shard's outbox stream to Kafka (DESIGN §4), batching as Kafka's own producer does: a
 * batch collects entries for `lingerMs` after its first one (or until `batchSize` entries wait), is
 * read in one XREADGROUP, produced in one sendBatch (idempotent producer, acks=all) and acknowledged
 * in one XACK + XDEL round trip. While a batch is produced the next one is collected and read; it
 * is produced once the previous produce is confirmed (while that batch is acknowledged), so at most
 * one sendBatch is in flight (the idempotent kafkajs producer keeps order only that way, see
 * KafkajsLedgerProducer) and acknowledgements follow read order (BatchPipeline). Idle, the relay blocks in
 * XREADGROUP (single node), looks at the denial hashes with one EXISTS per `denialIntervalMs` and
 * at the pending lists with one XPENDING summary per stream per `claimIntervalMs`. Several relays
 * share the streams through the consumer group `tally-relay`: Redis hands each new entry to exactly
 * one of them.
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
  /** Consecutive empty (or failed) reads: the idle backoff's exponent. */
  private idle = 0;
  /** When the batch being collected started (its first entry was seen, or the previous read ended). */
  private collectingSince = 0;
  /** The previous read was full: a backlog, read on without lingering. */
  private backlog = false;

  constructor(
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
    @Inject(RELAY_REDIS) private readonly redis: RelayRedis,
    @Inject(TOPIC_PROVISIONER) private readonly provisioner: TopicProvisioner,
    private readonly streams: OutboxStreams,
    private readonly publisher: KafkaPublisher,
    private readonly denials: DenialRelay,
    private readonly lifecycle: RelayLifecycle,
    private readonly metrics: RelayMetrics,
    private readonly spans: RecordSpans,
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

  /** SIGTERM: stop reading, finish the batches read (produce + ack), give the denial leases back. */
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
    // Produce N+1 overlaps ack N, and both overlap collecting N+2 (see BatchPipeline).
    const pipeline = new BatchPipeline();
    const settle = (): Promise<boolean> => pipeline.settle();
    while (!this.lifecycle.stopping) {
      if (!(await this.housekeeping(settle))) break;
      const entries = await this.collect();
      if (entries === undefined || entries.length === 0) continue;
      const started = performance.now();
      const plan = planOutboxBatch(entries, this.spans.tracer);
      const spans = this.spans.take();
      const submitted = await pipeline.submit(
        () => this.produce(plan, spans),
        () => this.acknowledge(plan, started),
      );
      if (!submitted) {
        endRecordSpans(spans, false); // never produced: the previous batch was abandoned at shutdown
        break;
      }
    }
    await settle();
  }

  /**
   * Re-claims and denial drains when due. Both publish, so they first wait for the batch in flight
   * (`settle`); false when that batch was abandoned at shutdown.
   */
  private async housekeeping(settle: () => Promise<boolean>): Promise<boolean> {
    const now = performance.now();
    if (now >= this.nextClaim) {
      this.nextClaim = now + this.options.claimIntervalMs;
      const streams = await this.orphanCandidates();
      if (streams.length > 0) {
        if (!(await settle())) return false;
        await this.reclaim(streams);
      }
    }
    if (now >= this.nextDrain && !this.lifecycle.stopping) {
      this.nextDrain = now + this.options.denialIntervalMs;
      try {
        const shards = await this.denials.pending();
        if (shards.length > 0) {
          if (!(await settle())) return false;
          await this.denials.drain(shards);
        }
      } catch (e) {
        this.logger.warn(`denial drain failed: ${String(e)}`);
      }
    }
    return true;
  }

  /**
   * The next batch, or undefined after a failed read (already counted and backed off). Busy (the
   * previous read found entries), it waits until `lingerMs` after the previous read, then reads once.
   * Idle, it blocks (single node; Cluster polls with a backoff) until an entry arrives, then lingers
   * and reads the rest: two reads for the first batch after a pause, one per batch after that.
   * A backlog (the previous read was full) is read on at once.
   */
  private async collect(): Promise<StreamEntry[] | undefined> {
    const { lingerMs, batchSize } = this.options;
    if (this.idle > 0) {
      const first = await this.readNew(batchSize, true);
      if (first === undefined || first.length === 0) return first;
      if (this.backlog || lingerMs === 0 || first.length >= batchSize) return first;
      this.collectingSince = performance.now();
      if (!(await this.lingerUntil(this.collectingSince + lingerMs))) return first;
      const rest = await this.readNew(batchSize - first.length, false);
      return rest === undefined ? first : [...first, ...rest];
    }
    if (!this.backlog && !(await this.lingerUntil(this.collectingSince + lingerMs))) return [];
    this.collectingSince = performance.now();
    return this.readNew(batchSize, false);
  }

  /** Sleeps until `at` (performance.now()); false when shutdown cut the sleep short. */
  private async lingerUntil(at: number): Promise<boolean> {
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait, this.lifecycle.signal);
    return !this.lifecycle.stopping;
  }

  /** Up to `budget` new entries, or undefined after a failed read (counted and backed off). */
  private async readNew(budget: number, mayBlock: boolean): Promise<StreamEntry[] | undefined> {
    const calls = planReads(this.streamKeys, this.hot, budget, {
      blockMs: mayBlock ? this.options.blockMs : undefined,
      perKey: this.redis.cluster,
    });
    try {
      const entries = await this.streams.read(calls);
      this.hot = backloggedStreams(calls, entries);
      this.backlog = this.hot.size > 0 || entries.length >= budget;
      this.idle = entries.length > 0 ? 0 : this.idle + 1;
      if (entries.length === 0 && this.redis.cluster) await this.pollPause();
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
   * Side-effect order of one batch (`produce` then `acknowledge`: here for re-claimed entries,
   * through BatchPipeline in the main loop), and what a crash between the steps costs:
   * 1. XREADGROUP delivered the entries to this consumer: they are in its pending list. Dying now
   *    (while they linger or wait for the previous batch's produce) loses nothing: after
   *    `claimMinIdleMs` another relay's XAUTOCLAIM takes them over.
   * 2. sendBatch, acks=all, idempotent producer, once the previous batch's produce is confirmed.
   *    Until Kafka confirms, nothing else happens to these entries (a Kafka outage keeps this step
   *    retrying: the outbox grows, nothing is trimmed or dropped). Dying mid-send: same as 1;
   *    whatever part reached Kafka is sent again, with the same event ids.
   * 3. XACK + XDEL of every stream of the batch in one round trip, only after 2 confirmed and the
   *    previous batch acknowledged (the next batch's step 2 runs meanwhile). Dying between 2 and 3
   *    is the one duplicate: the entries are re-claimed and published a second time with the same
   *    CloudEvents ids (decision ids), which the projector deduplicates. Kafka holds them at least
   *    once, projections once. Dying mid-3: the acknowledged part is done, the rest as between 2 and
   *    3 (or only a pending-list id whose entry is gone, which the re-claim acknowledges).
   * A relay killed with three batches read (one acknowledging, one producing, one lingering) leaves
   * them pending: at most the two already produced are published a second time. On shutdown past
   * the grace period step 2 is abandoned: the entries stay pending (as in 1).
   */
  private async publish(entries: readonly StreamEntry[]): Promise<boolean> {
    const started = performance.now();
    const plan = planOutboxBatch(entries, this.spans.tracer);
    return (await this.produce(plan, this.spans.take())) && this.acknowledge(plan, started);
  }

  /** `spans`: the batch's record spans (`RecordSpans`), ended once Kafka confirmed it. */
  private async produce(plan: OutboxBatchPlan, spans: readonly Span[]): Promise<boolean> {
    let published: boolean;
    try {
      published = await this.publisher.publish(plan.topicMessages);
    } catch (error) {
      endRecordSpans(spans, error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    endRecordSpans(spans, published);
    if (!published) return false;
    this.metrics.deadLettered.inc(plan.deadLettered);
    return true;
  }

  private async acknowledge(plan: OutboxBatchPlan, started: number): Promise<boolean> {
    if (!(await this.lifecycle.retry('ack', () => this.streams.acknowledge(plan.acks)))) return false;
    this.metrics.batchSeconds.observe((performance.now() - started) / 1000);
    return true;
  }

  /** Streams whose pending lists may hold a dead relay's entries; none while Kafka is failing. */
  private async orphanCandidates(): Promise<string[]> {
    if (this.publisher.lastFailure !== undefined) return [];
    try {
      return await this.streams.orphanCandidates(this.streamKeys, this.options.claimMinIdleMs);
    } catch (error) {
      this.metrics.errors.inc({ stage: 'claim' });
      this.logger.warn(`pending summary failed: ${String(error)}`);
      return [];
    }
  }

  /**
   * Entries pending in any consumer (this one included) longer than `claimMinIdleMs`: a relay that
   * died between read and ack. Skipped while Kafka is failing (see orphanCandidates): this relay could
   * not publish them either, and taking them would only move them between stuck relays.
   */
  private async reclaim(streams: readonly string[]): Promise<void> {
    for (const stream of streams) {
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
          if (!(await this.publish(claimed.entries))) return;
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
