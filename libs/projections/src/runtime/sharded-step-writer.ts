import type { LedgerEvent } from '@tally/events';
import type { LedgerRecord } from '@tally/ledger';
import type { OffsetMark } from '../sink/batch-step';
import { shardOfPartition } from '../sink/projection-keys';
import type { ApplyOutcome, ProjectionStore } from '../sink/projection.store';
import { StepWriter, type StepHooks } from './step-writer';

/**
 * Writes a namespace's events through one `StepWriter` per shard: the events of partition `p` go to
 * shard `shardOfPartition(p, shards)`, so every step touches one shard (one Cluster slot) and
 * stores only the offsets of that shard's partitions. The shards' steps run side by side, each
 * shard's in order; a failed step of any shard fails the whole writer (`onFailure` told once), so
 * callers handle one writer as before.
 */
export class ShardedStepWriter {
  private readonly writers = new Map<number, StepWriter>();
  private readonly hooks: StepHooks;
  private failed = false;

  constructor(
    private readonly store: Pick<ProjectionStore, 'prepareStep' | 'applyStep'>,
    private readonly namespace: string,
    private readonly shards: number,
    private readonly maxCells: number,
    hooks: StepHooks = {},
  ) {
    if (!Number.isSafeInteger(shards) || shards < 1) throw new RangeError(`invalid shard count: ${shards}`);
    this.hooks = {
      ...hooks,
      onFailure: (error) => {
        if (this.failed) return;
        this.failed = true;
        hooks.onFailure?.(error);
      },
    };
  }

  /** `StepWriter.add` on the writer of `offset.partition`'s shard. */
  async add(
    events: readonly LedgerEvent[],
    offset: OffsetMark,
    records?: readonly LedgerRecord[],
  ): Promise<void> {
    await this.writerOf(shardOfPartition(offset.partition, this.shards)).add(events, offset, records);
  }

  /** Cuts what every shard holds (`StepWriter.cutPending`). */
  async cutPending(): Promise<void> {
    await Promise.all([...this.writers.values()].map((writer) => writer.cutPending()));
  }

  /** Writes what is left in every shard; the totals of all their steps. */
  async flush(): Promise<ApplyOutcome> {
    const outcomes = await Promise.all([...this.writers.values()].map((writer) => writer.flush()));
    const total = { applied: 0, duplicates: 0, refused: 0 };
    for (const o of outcomes) {
      total.applied += o.applied;
      total.duplicates += o.duplicates;
      total.refused += o.refused;
    }
    return total;
  }

  private writerOf(shard: number): StepWriter {
    let writer = this.writers.get(shard);
    if (writer === undefined) {
      writer = new StepWriter(this.store, { namespace: this.namespace, shard }, this.maxCells, this.hooks);
      this.writers.set(shard, writer);
    }
    return writer;
  }
}
