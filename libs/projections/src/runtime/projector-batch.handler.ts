import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Tracing } from '@tally/observability';
import {
  LEDGER_PRODUCER,
  nextOffset,
  type BatchContext,
  type LedgerBatch,
  type LedgerProducer,
} from '@tally/ledger';
import type { OffsetMark } from '../sink/batch-step';
import { BatchQueue } from './batch-queue';
import { chunkMessages, deadLetterOf, sortBatch, type Rejected, type SortedBatch } from './batch-records';
import { ProjectionStore, type ApplyOutcome } from '../sink/projection.store';
import { PROJECTOR_OPTIONS } from '../projections.constants';
import { ProjectorMetrics } from './projector.metrics';
import { foldedTopics, topicEventTypes, type ResolvedProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';
import { ShardedStepWriter } from './sharded-step-writer';
import { projectionSpan } from './projection-span';
import type { RefusedRecord, StepHooks } from './step-writer';

/** Records validated and folded at a time; a step ends at most this many events past its budget. */
const SLICE_RECORDS = 256;
/** Dead letters per produce call stay well under Kafka's default 1 MiB message limit. */
const DLQ_CHUNK_BYTES = 512 * 1024;
/**
 * Records handed over and not yet folded. Enough to fold through a fetch's round trip (a fetch
 * brings up to `maxBytes`, ~45k events of ~700 bytes at the default 32 MiB), small enough that
 * the queue adds little lag: at the bench's ~50k events/s this is ~0.4 s of work.
 */
const QUEUED_RECORDS = 20_000;
/** kafkajs sends at most one heartbeat per `heartbeatInterval` however often this asks. */
const HEARTBEAT_MS = 1_000;

interface Handed {
  readonly batch: LedgerBatch;
  readonly namespace: string;
  readonly shards: number;
  /** `ProjectorPositions.generation` when handed over: a later seek makes the batch stale. */
  readonly generation: number;
}

/**
 * Applies the batches of every assigned partition. kafkajs hands a batch over (`handle`) and
 * fetches on while one loop folds and writes the batches in arrival order (`BatchQueue`): Redis
 * works during fetches and fetches run during folds. All partitions share one `ShardedStepWriter`
 * per namespace: the partitions of one shard share its steps, so a step aggregates whatever they
 * bring, and the shards' steps run side by side (on different Cluster nodes when there are some). The order of side effects per batch, and what a crash between them costs:
 *
 * 1. Validate every record (pure). Crash: nothing happened.
 * 2. Produce the invalid ones to the dead-letter topic (acks=all). Crash after: the batch is
 *    delivered again (no offset moved), so those records are dead-lettered twice. The DLQ is
 *    at-least-once by design; its records carry their source offset, so copies are recognisable.
 *    Never after step 3: an offset stored past an invalid record that never reached the DLQ would
 *    skip it silently.
 * 3. Atomic Redis steps, each: the dedup check, its events' effects, their dedup marks, and each
 *    partition's next offset after its events. Events a step cannot take (a sum past 2^53 − 1, a
 *    corrupt stored value: the step writes nothing) are dead-lettered first (3a, acks=all) and the
 *    step re-run without them; crash in between: redelivered, refused and dead-lettered again. Crash before a step: nothing of it is in Redis; it is
 *    redelivered from the offset of the step before and applied. Crash after it: all of it is in
 *    Redis, offsets included; on restart a partition resumes from its offset (ProjectorPositions
 *    seeks there), and anything delivered again anyway (another member that fetched it, a Kafka
 *    offset behind Redis) meets its dedup marks and is skipped.
 * 4. Commit the step's offsets to Kafka. Only for visibility (lag in `kafka-consumer-groups`, `tally
 *    consumers status`): Redis, not Kafka, says where to resume. A failure costs a redelivery that
 *    step 3's dedup absorbs.
 *
 * Handing over moves kafkajs past a batch before it is applied. So whenever positions are restored
 * (a rebalance, a namespace switch, a failed step) the waiting batches are dropped as stale and
 * every partition is sought back to the offset Redis holds: nothing is skipped, and what was both
 * applied and fetched again is absorbed by the dedup marks.
 */
@Injectable()
export class ProjectorBatchHandler {
  private readonly logger = new Logger('Projector');
  private readonly expectedTypes: Record<string, string | readonly string[]>;
  private readonly queue = new BatchQueue<Handed>(QUEUED_RECORDS);
  private readonly writers = new Map<string, ShardedStepWriter>();
  private loop?: Promise<void>;
  private readonly traceEvent?: StepHooks['traceEvent'];

  constructor(
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    @Inject(LEDGER_PRODUCER) private readonly producer: LedgerProducer,
    private readonly store: ProjectionStore,
    private readonly positions: ProjectorPositions,
    private readonly metrics: ProjectorMetrics,
    @Optional() tracing?: Tracing,
  ) {
    this.traceEvent = tracing?.enabled === true ? projectionSpan(tracing, options.groupId) : undefined;
    // Override changes travel with the decisions they change (keyed by tenant, folded into the audit trail).
    this.expectedTypes = topicEventTypes(options.topics);
    // Every topic's series exists from the start at 0: Prometheus's increase() cannot see the first
    // dead letter of a series that appears with it, and the dead-letter alert relies on it.
    for (const topic of foldedTopics(options.topics)) metrics.deadLettered.inc({ topic }, 0);
  }

  /** kafkajs's batch handler: hands the batch over; waits only while the queue is full. */
  async handle(batch: LedgerBatch, context: BatchContext): Promise<void> {
    // Stopping: leave the batch to whoever owns the partition next (its offset was not stored).
    if (batch.records.length === 0 || !context.isRunning()) return;
    // The namespace and the positions restored for it belong together: read both at once.
    const { namespace, shards, restored, generation } = this.positions.current();
    if (!(await restored)) throw new Error('partition positions not restored from Redis yet');
    // Fetched before the seek to the stored offset took effect: applying it could skip records.
    if (context.isStale()) {
      this.metrics.dropped.inc({ reason: 'repositioned' });
      return;
    }
    this.loop ??= this.drainLoop();
    // A full queue can hold this call for as long as Redis is slow: keep the membership alive.
    const beat = setInterval(() => void context.heartbeat().catch(() => undefined), HEARTBEAT_MS);
    try {
      await this.queue.push({ batch, namespace, shards: shards(), generation }, batch.records.length);
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * Shutdown, once the consumer stopped handing batches over: applies everything handed over and
   * waits for the last step, so the offsets stored are those of the last batch taken.
   */
  async drain(): Promise<void> {
    this.queue.close();
    await this.loop;
  }

  private async drainLoop(): Promise<void> {
    for (;;) {
      const handed = await this.queue.take();
      if (handed === undefined) break;
      const writer = this.writerOf(handed.namespace, handed.shards);
      try {
        await this.apply(writer, handed);
        // Nothing else waiting: write what is folded now rather than wait for the step budget.
        if (this.queue.length === 0) await writer.cutPending();
      } catch (error) {
        this.failed(handed.namespace, writer, error);
      }
    }
    for (const [namespace, writer] of this.writers) {
      await writer.flush().catch((error: unknown) => this.failed(namespace, writer, error));
    }
  }

  /**
   * A batch in slices, each validated (1), its invalid records dead-lettered (2) and its events
   * added to the writer (3, and 4 as each step is applied) with the offset after its last record.
   * Slices keep the parsed events few and short-lived, and bound how far a step runs past its
   * budget.
   */
  private async apply(writer: ShardedStepWriter, { batch, generation }: Handed): Promise<void> {
    if (generation !== this.positions.generation) {
      this.metrics.dropped.inc({ reason: 'repositioned' });
      return;
    }
    const timer = this.metrics.batchSeconds.startTimer();
    const { topic, partition, records } = batch;
    for (let i = 0; i < records.length; i += SLICE_RECORDS) {
      const slice = records.slice(i, i + SLICE_RECORDS);
      const sorted = sortBatch({ topic, records: slice }, this.expectedTypes); // 1
      if (sorted.rejected.length > 0) await this.deadLetter(batch, sorted); // 2
      const next = nextOffset(slice[slice.length - 1].offset);
      await writer.add(sorted.events, { topic, partition, nextOffset: next }, sorted.records); // 3
      // Lets Redis replies (and fetches) in between slices: the next step goes out as soon as the
      // running one is applied, not once this batch is folded.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    timer();
  }

  private async deadLetter(batch: LedgerBatch, sorted: SortedBatch): Promise<void> {
    await this.sendDeadLetters(sorted.rejected.map((rejected) => ({ from: batch, rejected })));
  }

  /**
   * 3a. The events a step refuses (a sum past 2^53 − 1, a corrupt stored value, a key of the wrong
   * type: the step wrote nothing) go to the dead-letter topic before the step is run again without
   * them, and so before its offsets pass them. Crash in between: the batch is delivered again and
   * the same events are refused and dead-lettered again (at least once, like invalid records).
   */
  private async deadLetterRefused(refused: readonly RefusedRecord[]): Promise<void> {
    const letters = refused.map(({ source, reason, event }) => {
      // The handler always hands records over, so every refused event has one.
      if (source === undefined) throw new Error(`refused event ${event.id} has no record to dead-letter`);
      return { from: source, rejected: { record: source.record, reason } };
    });
    await this.sendDeadLetters(letters);
  }

  private async sendDeadLetters(
    letters: readonly { from: { topic: string; partition: number }; rejected: Rejected }[],
  ): Promise<void> {
    const messages = letters.map(({ from, rejected }) => deadLetterOf(from, rejected, this.options.groupId));
    for (const chunk of chunkMessages(messages, DLQ_CHUNK_BYTES)) {
      await this.producer.send(this.options.topics.deadLetter, chunk);
    }
    for (const { from, rejected } of letters) {
      this.metrics.deadLettered.inc({ topic: from.topic });
      this.logger.warn(
        `dead-lettered ${from.topic}/${from.partition}@${rejected.record.offset}: ${rejected.reason.slice(0, 300)}`,
      );
    }
  }

  private writerOf(namespace: string, shards: number): ShardedStepWriter {
    let writer = this.writers.get(namespace);
    if (writer === undefined) {
      const { stepCells } = this.options;
      const created: ShardedStepWriter = new ShardedStepWriter(this.store, namespace, shards, stepCells, {
        onStep: (outcome, offsets) => this.stepApplied(outcome, offsets),
        onFailure: (error) => this.failed(namespace, created, error),
        onRefused: (refused) => this.deadLetterRefused(refused),
        traceEvent: this.traceEvent,
      });
      writer = created;
      this.writers.set(namespace, writer);
    }
    return writer;
  }

  private stepApplied(outcome: ApplyOutcome, offsets: readonly OffsetMark[]): void {
    this.metrics.applied.inc(outcome.applied);
    this.metrics.duplicates.inc(outcome.duplicates);
    this.positions.commit(offsets).catch((error: unknown) => {
      // 4. Visibility only; the next step's commit covers this one.
      this.metrics.commitErrors.inc();
      this.logger.warn(`Kafka commit failed: ${String(error)}`);
    });
  }

  /**
   * A step (or a dead-letter send) failed: what the writer held is gone, and kafkajs has read past
   * it. Start over from Redis: drop the waiting batches and seek every partition back. Told once per
   * writer, whether the failure surfaced in the loop or in the writer's own step.
   */
  private failed(namespace: string, writer: ShardedStepWriter, error: unknown): void {
    if (this.writers.get(namespace) !== writer) return;
    this.logger.error(`applying to ${namespace} failed, resuming from its stored offsets: ${String(error)}`);
    this.metrics.stepFailures.inc();
    this.writers.delete(namespace);
    this.metrics.dropped.inc({ reason: 'repositioned' }, this.queue.clear());
    this.positions.resync();
  }
}
