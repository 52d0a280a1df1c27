import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  LEDGER_CONSUMER_FACTORY,
  TOPIC_PROVISIONER,
  type LedgerConsumer,
  type LedgerConsumerFactory,
  type TopicProvisioner,
} from '@tally/ledger';
import type { ComponentHealth } from '@tally/observability';
import { sleep } from '@tally/redis';
import { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { PROJECTOR_OPTIONS } from '../projections.constants';
import { ProjectorBatchHandler } from './projector-batch.handler';
import { foldedTopics, type ResolvedProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';

type ConsumerState = 'idle' | 'starting' | 'joined' | 'restarting' | 'stopped';

const RETRY_MS = [500, 1_000, 2_000, 5_000] as const;

/**
 * The projector's consumer-group member: provisions the topics, makes sure a namespace is active,
 * joins the group and keeps it running (a crash the client does not recover from is restarted here).
 * On shutdown it stops after the batch in flight and leaves the group, so the partitions move to the
 * other members at once, before the Redis connection closes.
 */
@Injectable()
export class Projector implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private readonly stopping = new AbortController();
  private consumer?: LedgerConsumer;
  private state: ConsumerState = 'idle';
  private starting?: Promise<void>;
  private namespaceTimer?: NodeJS.Timeout;

  constructor(
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    @Inject(LEDGER_CONSUMER_FACTORY) private readonly consumers: LedgerConsumerFactory,
    @Inject(TOPIC_PROVISIONER) private readonly provisioner: TopicProvisioner,
    private readonly namespaces: ProjectionNamespaces,
    private readonly positions: ProjectorPositions,
    private readonly batches: ProjectorBatchHandler,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.consume) return;
    // In the background: the query API serves while Kafka is still unreachable; /readyz says so.
    this.starting = this.start();
    this.namespaceTimer = setInterval(() => {
      this.positions.followActiveNamespace().catch((error: unknown) => {
        this.logger.warn(`reading the active namespace failed: ${String(error)}`);
      });
    }, this.options.namespacePollMs);
    this.namespaceTimer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.namespaceTimer);
    await this.starting;
    const consumer = this.consumer;
    this.consumer = undefined;
    // Kafka's commits catch up with the steps stored so far while the group still runs, and stop.
    await this.positions.closeCommits().catch((error: unknown) => {
      this.logger.warn(`Kafka commit at shutdown failed: ${String(error)}`);
    });
    if (consumer !== undefined) {
      await consumer.stop(); // returns once the batches in flight are handed over
      await this.batches.drain(); // applies every batch handed over
      await consumer.disconnect(); // leaves the group
    }
    this.state = 'stopped';
  }

  health(): ComponentHealth {
    const where = `group ${this.options.groupId}, namespace ${this.positions.activeNamespace || '?'}`;
    switch (this.state) {
      case 'joined':
        return { status: 'up', detail: `joined ${where}, ${this.positions.partitions} partitions` };
      case 'idle':
        return { status: 'up', detail: 'queries only (consume=false)' };
      case 'starting':
      case 'restarting':
        return { status: 'degraded', detail: `not joined yet (${this.state}), ${where}` };
      case 'stopped':
        return { status: 'down', detail: 'stopped' };
    }
  }

  private async start(): Promise<void> {
    this.state = 'starting';
    for (let attempt = 0; !this.stopping.signal.aborted; attempt++) {
      try {
        await this.provisioner.ensureTopics(this.options.topicSpecs);
        const shards = await this.positions.newShardCount();
        const active = await this.namespaces.ensureActive(this.options.defaultNamespace, shards);
        if (await this.namespaces.isLegacy(active))
          this.logger.warn(
            `namespace ${active} holds keys of layout 1 (before shards), which are not read: rebuild it by a replay (docs/operations.md)`,
          );
        await this.warnOfMovedShards(active);
        this.positions.useNamespace(active);
        await this.join();
        return;
      } catch (error) {
        this.logger.warn(`projector start failed (attempt ${attempt + 1}), retrying: ${String(error)}`);
        await this.consumer?.disconnect().catch(() => undefined);
        this.consumer = undefined;
        await sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)] ?? 5_000, this.stopping.signal);
      }
    }
  }

  /**
   * Per-shard dedup is exact only while every event keeps its shard: topics grown to a partition
   * count the namespace's shard count does not divide may put a re-published twin in another shard
   * (`shardOfPartition`; docs/operations.md). Said at start, where an operator looks.
   */
  private async warnOfMovedShards(namespace: string): Promise<void> {
    const shards = await this.namespaces.shards(namespace);
    const counts = await this.positions.partitionCounts();
    if (shards > 0 && counts.some((count) => count % shards !== 0))
      this.logger.warn(
        `namespace ${namespace} has ${shards} shards but the topics have ${counts.join(' and ')} partitions: grow topics only to multiples of ${shards}, or twins re-published across the growth may count twice (docs/operations.md)`,
      );
  }

  private async join(): Promise<void> {
    const { options } = this;
    const consumer = this.consumers.create({
      groupId: options.groupId,
      topics: foldedTopics(options.topics),
      fromBeginning: true,
      autoCommit: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
      sessionTimeoutMs: options.sessionTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      maxWaitTimeMs: options.maxWaitTimeMs,
      minBytes: options.fetchMinBytes,
      maxBytesPerPartition: options.maxBytesPerPartition,
      maxBytes: options.maxBytes,
    });
    this.consumer = consumer;
    consumer.onAssigned((assignment) => {
      this.state = 'joined';
      this.positions.assigned(consumer, assignment);
    });
    consumer.onCrash((error, restarting) => {
      this.logger.error(
        `consumer crashed (${restarting ? 'the client rejoins' : 'restarting it'}): ${error.message}`,
      );
      if (this.stopping.signal.aborted || this.consumer !== consumer) return;
      this.state = 'restarting';
      if (!restarting) {
        this.consumer = undefined;
        void consumer.disconnect().catch(() => undefined);
        this.starting = this.start();
      }
    });
    await consumer.run((batch, context) => this.batches.handle(batch, context));
  }
}
