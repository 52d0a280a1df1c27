import type { LedgerEvent } from '@tally/events';
import type { RedisClient } from '@tally/redis';
import { defineApplyBatch, runApplyBatch } from './apply-batch.script';
import { batchStepArgs, type BatchStepArgs, type BatchStepOptions, type OffsetMark } from './batch-step';
import { foldEvents } from '../fold/fold-events';
import type { ProjectionDelta, RefusedIndex } from '../fold/projection-delta';
import { ProjectionKeys, dedupTokenOf } from './projection-keys';
import { StepLimits } from './step-limits';

/**
 * One shard of a namespace: what a step writes into (`shardOfPartition` says which shard the events
 * of a partition belong to; the caller keeps a step to the partitions of one shard).
 */
export interface ShardRef {
  readonly namespace: string;
  readonly shard: number;
}

/** What one batch did to the namespace. */
export interface ApplyOutcome {
  /** Events whose effects were written. */
  readonly applied: number;
  /** Events skipped: repeated within the batch, or applied by an earlier batch or another projector. */
  readonly duplicates: number;
  /** Events the namespace could not take (a sum past 2^53 − 1, a corrupt value): handed to `RefusalSink`. */
  readonly refused: number;
}

/** An event a step cannot apply, and why (the dead-letter reason). */
export interface RefusedEvent {
  /** Its position among the step's events (`StepEvents`), duplicates included. */
  readonly index: number;
  readonly event: LedgerEvent;
  readonly reason: string;
}

/**
 * Takes the events a step refuses, before the step that stores offsets past them is written: the
 * projector dead-letters them (acks=all), so an event is either in the namespace or in the DLQ,
 * never in neither. A rejection fails the step (nothing of it written).
 */
export type RefusalSink = (refused: readonly RefusedEvent[]) => Promise<void>;

/**
 * One atomic step made ready before it runs: folding and laying out arguments is the CPU work of a
 * step, so a writer prepares the next one while Redis applies the current one.
 */
export interface PreparedStep {
  readonly namespace: string;
  /** Every key of the step is a key of this shard of `namespace`: one Cluster slot. */
  readonly shard: number;
  /** Only read when the step must be folded again (`StepEvents`). */
  readonly events: StepEvents;
  readonly offsets: readonly OffsetMark[];
  readonly applied: number;
  readonly duplicates: number;
  /** Refused by the fold itself (a sum of the step past 2^53 − 1): dead-lettered before the first run. */
  readonly refused: readonly RefusedIndex[];
  readonly args: BatchStepArgs;
}

/**
 * The events of a step, for the rare refold (some were applied meanwhile): as they were folded, or
 * read again from their records. A writer that keeps the records instead of the parsed events lets
 * every parsed event die young, which is a tenth of the projector's CPU in garbage collection.
 */
export type StepEvents = readonly LedgerEvent[] | (() => readonly LedgerEvent[]);

/** A step that keeps meeting newly applied events is a bug or a storm; give the batch back to Kafka. */
const MAX_ATTEMPTS = 8;

/**
 * The Redis sink of projections: the one atomic step per batch (effects and offsets together). Also
 * what `tally replay` writes through, so a replayed namespace carries offsets the projector can
 * resume from. Namespaces themselves (registry, active pointer, stored offsets) belong to
 * `ProjectionNamespaces`.
 */
export class ProjectionStore {
  constructor(
    readonly redis: RedisClient,
    private readonly options: BatchStepOptions,
  ) {
    defineApplyBatch(redis);
  }

  /**
   * Folds `events` and writes their effects with `offsets` in one atomic step. The dedup check runs
   * inside the step: if any event turns out to be applied already (a redelivery, or another member
   * that held the partition during a rebalance), the step writes nothing and names those events; the
   * batch is folded again without them and the step retried. So an event counts exactly once
   * however many batches, members or restarts deliver it. Events the namespace cannot take go to
   * `refusals` (see `applyStep`).
   */
  async applyBatch(
    { namespace, shard }: ShardRef,
    events: readonly LedgerEvent[],
    offsets: readonly OffsetMark[],
    refusals?: RefusalSink,
  ): Promise<ApplyOutcome> {
    return this.applyStep(this.prepareStep({ namespace, shard }, events, offsets), refusals);
  }

  /**
   * Folds `events` (or takes their `delta` when the caller folded them as they came, with no
   * context) and lays out the step. Pure CPU work, no I/O.
   */
  prepareStep(
    { namespace, shard }: ShardRef,
    events: StepEvents,
    offsets: readonly OffsetMark[],
    delta: ProjectionDelta = foldEvents(eventsOf(events)),
  ): PreparedStep {
    const args = batchStepArgs(new ProjectionKeys(namespace, shard), delta, offsets, this.options);
    const { applied, duplicates, refused } = delta;
    return { namespace, shard, events, offsets, applied, duplicates, refused, args };
  }

  /**
   * Runs a prepared step, with `applyBatch`'s dedup retries. A step the script refuses (a cell
   * whose sum would pass 2^53 − 1, a stored value that is not a counter, a key of the wrong type:
   * nothing written) is folded again with what the script reported (`StepLimits`): the fold takes
   * the events in order and refuses exactly those that do not fit. Refused events go to `refusals`
   * — always before the run that stores offsets past them — and the rest is retried. Without
   * `refusals` they are only counted (`tally replay` reports them).
   */
  async applyStep(step: PreparedStep, refusals?: RefusalSink): Promise<ApplyOutcome> {
    const keys = new ProjectionKeys(step.namespace, step.shard);
    const known = new Set<string>();
    const refusedTokens = new Set<string>();
    const limits = new StepLimits();
    let { args, applied, duplicates, refused } = step;
    let events: readonly LedgerEvent[] | undefined;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (refused.length > 0) {
        const all = (events ??= eventsOf(step.events));
        const list = refused.map(({ index, reason }) => ({ index, reason, event: eventAt(all, index) }));
        await refusals?.(list);
        for (const { event } of list) refusedTokens.add(dedupTokenOf(event));
      }
      const reply = await runApplyBatch(this.redis, args);
      if (reply.kind === 'applied') return { applied, duplicates, refused: refusedTokens.size };
      if (reply.kind === 'already_applied') for (const token of reply.tokens) known.add(token);
      else limits.learn(args.keys, args.targets, reply.problems);
      events ??= eventsOf(step.events);
      const delta = foldEvents(events, {
        isApplied: (token) => known.has(token),
        isRefused: (token) => refusedTokens.has(token),
        ...(limits.size > 0 ? { limits } : {}),
      });
      // A refusal that blames no event would be retried forever: a bug, not data.
      if (reply.kind === 'refused' && delta.refused.length === 0)
        throw new Error(
          `step refused but no event was refused: ${JSON.stringify(reply.problems.slice(0, 3))}`,
        );
      args = batchStepArgs(keys, delta, step.offsets, this.options);
      ({ applied, duplicates, refused } = delta);
    }
    throw new Error(
      `batch not applied after ${MAX_ATTEMPTS} attempts: events keep being applied concurrently`,
    );
  }
}

function eventAt(events: readonly LedgerEvent[], index: number): LedgerEvent {
  const event = events[index];
  if (event === undefined) throw new RangeError(`no event ${index} in a step of ${events.length}`);
  return event;
}

function eventsOf(events: StepEvents): readonly LedgerEvent[] {
  return typeof events === 'function' ? events() : events;
}
