import { Inject, Injectable, Logger } from '@nestjs/common';
import { KAFKA_ADMIN, type Assignment, type KafkaAdminPort, type LedgerConsumer } from '@tally/ledger';
import { offsetField, shardsForPartitions } from '../sink/projection-keys';
import { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { PROJECTOR_OPTIONS } from '../projections.constants';
import { foldedTopics, type ResolvedProjectorOptions } from './projector.options';

/** How long a stopping member waits for its last Kafka commit (visibility only). */
const CLOSING_COMMIT_MS = 1_000;

/**
 * Where each assigned partition resumes: the offset stored in Redis with the last batch applied to
 * the active namespace, never Kafka's committed offset. A partition the namespace never stored an
 * offset for starts at its earliest retained record, so a new (or lost) namespace is rebuilt in full.
 * Batches fetched before these seeks take effect are stale and dropped (see ProjectorBatchHandler).
 */
@Injectable()
export class ProjectorPositions {
  private readonly logger = new Logger('Projector');
  private namespace = '';
  /** Shards of `namespace`, read (or fixed) with every restore. */
  private shards = 0;
  private assignment: Assignment = {};
  private consumer?: LedgerConsumer;
  private restored: Promise<boolean> = Promise.resolve(false);
  private failed = false;
  private seeks = 0;
  /** Offsets stored by steps and not yet committed to Kafka, by topic and partition. */
  private readonly pendingCommits = new Map<
    string,
    { topic: string; partition: number; nextOffset: string }
  >();
  private commitTimer?: NodeJS.Timeout;
  private nextCommit?: Promise<void>;
  private releaseCommit?: () => void;
  private lastCommitAt = 0;
  /** Shutting down: no more Kafka commits (kafkajs commits only inside a running group). */
  private commitsClosed = false;

  constructor(
    private readonly namespaces: ProjectionNamespaces,
    @Inject(KAFKA_ADMIN) private readonly admin: KafkaAdminPort,
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
  ) {}

  /**
   * The shard count a namespace created now gets: the GCD of the topics' partition counts (see
   * `shardOfPartition`).
   */
  async newShardCount(): Promise<number> {
    return shardsForPartitions(await this.partitionCounts());
  }

  /** The partition counts of the ledger topics now. */
  async partitionCounts(): Promise<number[]> {
    return Promise.all(
      foldedTopics(this.options.topics).map(
        async (topic) => (await this.admin.fetchTopicOffsets(topic)).length,
      ),
    );
  }

  /**
   * The namespace batches go to, whether positions for it are restored (await it), and the
   * generation of the positions: it changes with every restore, so a batch taken under an older
   * one was fetched before a seek and must not be applied.
   */
  current(): {
    readonly namespace: string;
    /** Valid once `restored` resolved true: the shards of `namespace`. */
    readonly shards: () => number;
    readonly restored: Promise<boolean>;
    readonly generation: number;
  } {
    // A failed restore (Redis or Kafka blip) is retried by the next batch that asks.
    if (this.failed) this.restore();
    return {
      namespace: this.namespace,
      shards: () => this.shards,
      restored: this.restored,
      generation: this.seeks,
    };
  }

  get generation(): number {
    return this.seeks;
  }

  /**
   * Seeks every assigned partition back to the offsets stored in Redis: after a failed step, the
   * consumer has read past records that were never applied.
   */
  resync(): void {
    if (this.consumer !== undefined) this.restore();
  }

  /**
   * Kafka's commits follow the offsets steps stored (visibility only: lag for the group tools). With
   * `commitIntervalMs`, offsets wait and go together, one commit per interval at most: each commit
   * is a write to `__consumer_offsets`, which costs the broker more than the fetch it follows.
   */
  async commit(offsets: readonly { topic: string; partition: number; nextOffset: string }[]): Promise<void> {
    if (this.commitsClosed) return;
    if (this.options.commitIntervalMs <= 0) {
      await this.consumer?.commitOffsets(
        offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.nextOffset })),
      );
      return;
    }
    for (const o of offsets) this.pendingCommits.set(`${o.topic}\u0000${o.partition}`, o);
    this.nextCommit ??= new Promise<void>((resolve) => {
      const wait = Math.max(0, this.lastCommitAt + this.options.commitIntervalMs - Date.now());
      this.commitTimer = setTimeout(resolve, wait);
      this.commitTimer.unref(); // visibility only: never what keeps a stopping process alive
      this.releaseCommit = resolve;
    }).then(() => this.flushCommits());
    await this.nextCommit;
  }

  /**
   * Shutdown, while the group is still joined: what waits is committed now and later steps commit
   * nothing to Kafka (their offsets are in Redis, which the next member resumes from; kafkajs
   * refuses a commit once its consumer stopped).
   */
  async closeCommits(): Promise<void> {
    this.commitsClosed = true;
    // Bounded: with the coordinator unreachable kafkajs retries for tens of seconds, and a member
    // that overstays its grace period is killed without leaving the group.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSING_COMMIT_MS);
      timer.unref();
    });
    await Promise.race([this.flushCommits(), bound]).finally(() => clearTimeout(timer));
  }

  /** The offsets waiting for the next commit, committed now. */
  async flushCommits(): Promise<void> {
    clearTimeout(this.commitTimer);
    const release = this.releaseCommit;
    this.nextCommit = undefined;
    this.releaseCommit = undefined;
    release?.(); // a caller waiting on the timer: its offsets go with this commit
    // Only partitions still this member's: a step that was running when a rebalance moved its
    // partition stores its offset afterwards, and committing it would move the new owner's back.
    const offsets = [...this.pendingCommits.values()].filter((o) =>
      this.assignment[o.topic]?.includes(o.partition),
    );
    this.pendingCommits.clear();
    if (offsets.length === 0 || this.consumer === undefined) return;
    this.lastCommitAt = Date.now();
    await this.consumer.commitOffsets(
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.nextOffset })),
    );
  }

  get activeNamespace(): string {
    return this.namespace;
  }

  get partitions(): number {
    return Object.values(this.assignment).reduce((n, list) => n + list.length, 0);
  }

  useNamespace(namespace: string): void {
    this.namespace = namespace;
  }

  /** After every group join: this member's partitions, each sought to its stored offset. */
  assigned(consumer: LedgerConsumer, assignment: Assignment): void {
    this.consumer = consumer;
    this.assignment = assignment;
    this.restore();
  }

  /** `tally projections switch` moved the pointer: write into the new namespace from its own offsets. */
  async followActiveNamespace(): Promise<void> {
    const active = await this.namespaces.active();
    if (active === null || active === this.namespace || this.namespace === '') return;
    this.logger.log(`active namespace is now ${active} (was ${this.namespace}); resuming from its offsets`);
    this.namespace = active;
    if (this.consumer !== undefined) this.restore();
  }

  private restore(): void {
    // The restore commits the stored offsets itself; waiting ones may name partitions now elsewhere.
    this.pendingCommits.clear();
    this.failed = false;
    this.seeks++;
    const { consumer, namespace, assignment } = this;
    this.restored = this.seekAll(consumer, namespace, assignment).then(
      () => true,
      (error: unknown) => {
        this.failed = true;
        this.logger.warn(`could not restore partition positions from ${namespace}: ${String(error)}`);
        return false;
      },
    );
  }

  private async seekAll(
    consumer: LedgerConsumer | undefined,
    namespace: string,
    assignment: Assignment,
  ): Promise<void> {
    if (consumer === undefined) throw new Error('no consumer yet');
    // A namespace switched to without shards (layout 1) gets them now; its old keys stay unread.
    let shards = await this.namespaces.shards(namespace);
    if (shards === 0) shards = await this.namespaces.ensureShards(namespace, await this.newShardCount());
    this.shards = shards;
    const stored = await this.namespaces.offsets(namespace);
    const resumed: string[] = [];
    const commits: { topic: string; partition: number; offset: string }[] = [];
    for (const [topic, partitions] of Object.entries(assignment)) {
      const missing = partitions.filter((p) => !stored.has(offsetField(topic, p)));
      const earliest = new Map<number, string>();
      if (missing.length > 0) {
        for (const o of await this.admin.fetchTopicOffsets(topic)) earliest.set(o.partition, o.low);
      }
      for (const partition of partitions) {
        const own = stored.get(offsetField(topic, partition));
        const offset = own ?? earliest.get(partition) ?? '0';
        consumer.seek(topic, partition, offset);
        if (own !== undefined) commits.push({ topic, partition, offset: own });
        resumed.push(`${topic}/${partition}@${offset}`);
      }
    }
    this.logger.log(`namespace ${namespace}: resuming ${resumed.join(' ') || 'no partitions'}`);
    // Kafka's commits follow Redis, so group lag is true also for partitions with nothing new to read.
    await consumer.commitOffsets(commits).catch((error: unknown) => {
      this.logger.warn(`committing the restored offsets to Kafka failed: ${String(error)}`);
    });
  }
}
