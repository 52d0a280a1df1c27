import { Inject, Injectable, Logger } from '@nestjs/common';
import { DECISION_EVENT_TYPE, USAGE_EVENT_TYPE } from '@tally/events';
import {
  LEDGER_PRODUCER,
  nextOffset,
  type BatchContext,
  type LedgerBatch,
  type LedgerProducer,
} from '@tally/ledger';
import { chunkMessages, deadLetterOf, sortBatch } from './batch-records';
import { ProjectionStore } from './projection.store';
import { PROJECTOR_OPTIONS } from './projections.constants';
import { ProjectorMetrics } from './projector.metrics';
import type { ResolvedProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';

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
 * 3. ONE atomic Redis step: the dedup check, the events' effects, their dedup marks, and the
 *    partition's next offset. Crash before it: nothing of the batch is in Redis; it is redelivered
 *    and applied. Crash after it: all of it is in Redis, offset included; on restart the partition
 *    resumes from that offset (ProjectorPositions seeks there), and anything delivered again anyway
 *    (another member that fetched it, a Kafka offset behind Redis) meets its dedup marks and is skipped.
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

    const mark = { topic: batch.topic, partition: batch.partition, nextOffset: nextOffset(last.offset) };
    const outcome = await this.store.applyBatch(namespace, sorted.events, [mark]); // 3
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
}
