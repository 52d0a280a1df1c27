import { Inject, Injectable, Logger } from '@nestjs/common';
import { DECISION_EVENT_TYPE, USAGE_EVENT_TYPE } from '@tally/events';
import {
  LEDGER_PRODUCER,
  nextOffset,
  type BatchContext,
  type LedgerBatch,
  type LedgerProducer,
} from '@tally/ledger';
import { chunkMessages, deadLetterOf, sortBatch, type SortedBatch } from './batch-records';
import { ProjectionStore, type ApplyOutcome } from './projection.store';
import { PROJECTOR_OPTIONS } from './projections.constants';
import { ProjectorMetrics } from './projector.metrics';
import type { ResolvedProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';
import { StepWriter } from './step-writer';

/** How often a step's size is checked: a step ends at most this many events past its cell budget. */
const SLICE_EVENTS = 256;
/** Dead letters per produce call stay well under Kafka's default 1 MiB message limit. */
const DLQ_CHUNK_BYTES = 512 * 1024;

/**
 * Applies one batch of one partition. The order of side effects, and what a crash between them costs:
 *
 * 1. Validate every record (pure). Crash: nothing happened.
 * 2. Produce the invalid ones to the dead-letter topic (acks=all). Crash after: the batch is
 *    delivered again (no offset moved), so those records are dead-lettered twice. The DLQ is
 *    at-least-once by design; its records carry their source offset, so copies are recognisable.
 *    Never after step 3: an offset stored past an invalid record that never reached the DLQ would
 *    skip it silently.
 * 3. Atomic Redis steps (one for most batches; a large batch is cut by its Redis cost, see
 *    `apply`), each: the dedup check, its events' effects, their dedup marks, and the partition's
 *    next offset after its events. Crash before a step: nothing of it is in Redis; it is redelivered
 *    from the offset of the step before and applied. Crash after it: all of it is in Redis, offset
 *    included; on restart the partition resumes from that offset (ProjectorPositions seeks there),
 *    and anything delivered again anyway (another member that fetched it, a Kafka offset behind
 *    Redis) meets its dedup marks and is skipped.
 * 4. Commit the offset to Kafka. Only for visibility (lag in `kafka-consumer-groups`, `tally
 *    consumers status`): Redis, not Kafka, says where to resume. Crash or failure here: the Kafka
 *    commit lags behind Redis, which costs a redelivery that step 3's dedup absorbs.
 */
@Injectable()
export class ProjectorBatchHandler {
  private readonly logger = new Logger('Projector');
  private readonly expectedTypes: Record<string, string>;

  constructor(
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    @Inject(LEDGER_PRODUCER) private readonly producer: LedgerProducer,
    private readonly store: ProjectionStore,
    private readonly positions: ProjectorPositions,
    private readonly metrics: ProjectorMetrics,
  ) {
    this.expectedTypes = {
      [options.topics.usage]: USAGE_EVENT_TYPE,
      [options.topics.decision]: DECISION_EVENT_TYPE,
    };
  }

  async handle(batch: LedgerBatch, context: BatchContext): Promise<void> {
    const last = batch.records[batch.records.length - 1];
    // Stopping: leave the batch to whoever owns the partition next (its offset was not stored).
    if (last === undefined || !context.isRunning()) return;
    // The namespace and the positions restored for it belong together: read both at once.
    const { namespace, restored } = this.positions.current();
    if (!(await restored)) throw new Error('partition positions not restored from Redis yet');
    // Fetched before the seek to the stored offset took effect: applying it could skip records.
    if (context.isStale()) {
      this.metrics.dropped.inc({ reason: 'repositioned' });
      return;
    }
    const timer = this.metrics.batchSeconds.startTimer();

    const sorted = sortBatch(batch, this.expectedTypes); // 1
    if (sorted.rejected.length > 0) {
      const letters = sorted.rejected.map((r) => deadLetterOf(batch, r, this.options.groupId));
      for (const chunk of chunkMessages(letters, DLQ_CHUNK_BYTES)) {
        await this.producer.send(this.options.topics.deadLetter, chunk); // 2
      }
      this.metrics.deadLettered.inc({ topic: batch.topic }, sorted.rejected.length);
      for (const r of sorted.rejected) {
        this.logger.warn(
          `dead-lettered ${batch.topic}/${batch.partition}@${r.record.offset}: ${r.reason.slice(0, 300)}`,
        );
      }
      await context.heartbeat();
    }

    const outcome = await this.apply(namespace, batch, sorted); // 3
    this.metrics.applied.inc(outcome.applied);
    this.metrics.duplicates.inc(outcome.duplicates);
    timer();

    await context.commitThrough(last.offset).catch((error: unknown) => {
      // 4. Visibility only; the next batch's commit covers this one.
      this.metrics.commitErrors.inc();
      this.logger.warn(`Kafka commit of ${batch.topic}/${batch.partition} failed: ${String(error)}`);
    });
    await context.heartbeat();
  }

  /**
   * Step 3 in as many atomic steps as the batch's cells need (StepWriter): a large fetch then never
   * holds Redis for long, and the next step is folded while Redis applies the current one. Each
   * step stores the offset after its last event, so a crash between steps resumes right after the
   * last one applied; the last step stores the offset after the whole batch (trailing records that
   * were dead-lettered included).
   */
  private async apply(namespace: string, batch: LedgerBatch, sorted: SortedBatch): Promise<ApplyOutcome> {
    const { topic, partition } = batch;
    const mark = (offset: string) => ({ topic, partition, nextOffset: nextOffset(offset) });
    const writer = new StepWriter(this.store, namespace, this.options.stepCells);
    const { events, offsets } = sorted;
    for (let i = 0; i < events.length; i += SLICE_EVENTS) {
      const end = Math.min(i + SLICE_EVENTS, events.length);
      await writer.add(events.slice(i, end), mark(offsets[end - 1]));
    }
    const last = batch.records[batch.records.length - 1];
    await writer.add([], mark(last.offset));
    return writer.flush();
  }
}
