import type { LedgerEvent } from '@tally/events';
import { defineApplyBatch, runApplyBatch, type ProjectionRedis } from './apply-batch.script';
import { batchStepArgs, type BatchStepArgs, type BatchStepOptions, type OffsetMark } from './batch-step';
import { foldEvents } from './fold-events';
import type { ProjectionDelta } from './projection-delta';
import { ACTIVE_NAMESPACE_KEY, NAMESPACES_KEY, ProjectionKeys, isValidNamespace } from './projection-keys';

/** What one batch did to the namespace. */
export interface ApplyOutcome {
  /** Events whose effects were written. */
  readonly applied: number;
  /** Events skipped: repeated within the batch, or applied by an earlier batch or another projector. */
  readonly duplicates: number;
}

/**
 * One atomic step made ready before it runs: folding and laying out arguments is the CPU work of a
 * step, so a writer prepares the next one while Redis applies the current one.
 */
export interface PreparedStep {
  readonly namespace: string;
  /** Only read when the step must be folded again (`StepEvents`). */
  readonly events: StepEvents;
  readonly offsets: readonly OffsetMark[];
  readonly applied: number;
  readonly duplicates: number;
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
 * The Redis sink of projections: namespaces, offsets, and the one atomic step per batch. Also what
 * `tally replay` writes through, so a replayed namespace carries offsets the projector can resume from.
 */
export class ProjectionStore {
  constructor(
    readonly redis: ProjectionRedis,
    private readonly options: BatchStepOptions,
  ) {
    defineApplyBatch(redis);
  }

  /** The namespace queries read and the projector writes; null before any projector started. */
  async activeNamespace(): Promise<string | null> {
    return this.redis.get(ACTIVE_NAMESPACE_KEY);
  }

  /**
   * Makes `name` the active namespace unless one already is (first start), and returns the active
   * one. SET NX: two projectors starting together agree on one.
   */
  async ensureActiveNamespace(name: string): Promise<string> {
    const keys = new ProjectionKeys(name);
    await this.redis.sadd(NAMESPACES_KEY, name);
    const [seconds, micros] = await this.redis.time();
    await this.redis.hsetnx(
      keys.meta(),
      'created',
      Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    );
    await this.redis.set(ACTIVE_NAMESPACE_KEY, name, 'NX');
    return (await this.activeNamespace()) ?? name;
  }

  async namespaceExists(name: string): Promise<boolean> {
    return (await this.redis.sismember(NAMESPACES_KEY, name)) === 1;
  }

  /** The namespace a query reads: the one it names if that exists, else the active one; null if none. */
  async resolveNamespace(requested?: string): Promise<string | null> {
    if (requested === undefined) return this.activeNamespace();
    return isValidNamespace(requested) && (await this.namespaceExists(requested)) ? requested : null;
  }

  /** `<topic>:<partition>` → next offset to consume, as stored with the last applied batch. */
  async offsets(namespace: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(new ProjectionKeys(namespace).offsets())));
  }

  /**
   * Folds `events` and writes their effects with `offsets` in one atomic step. The dedup check runs
   * inside the step: if any event turns out to be applied already (a redelivery, or another member
   * that held the partition during a rebalance), the step writes nothing and names those events; the
   * batch is folded again without them and the step retried. So an event counts exactly once
   * however many batches, members or restarts deliver it.
   */
  async applyBatch(
    namespace: string,
    events: readonly LedgerEvent[],
    offsets: readonly OffsetMark[],
  ): Promise<ApplyOutcome> {
    return this.applyStep(this.prepareStep(namespace, events, offsets));
  }

  /**
   * Folds `events` (or takes their `delta` when the caller folded them as they came, with no
   * context) and lays out the step. Pure CPU work, no I/O.
   */
  prepareStep(
    namespace: string,
    events: StepEvents,
    offsets: readonly OffsetMark[],
    delta: ProjectionDelta = foldEvents(eventsOf(events)),
  ): PreparedStep {
    const args = batchStepArgs(new ProjectionKeys(namespace), delta, offsets, this.options);
    return { namespace, events, offsets, applied: delta.applied, duplicates: delta.duplicates, args };
  }

  /** Runs a prepared step, with `applyBatch`'s dedup retries. */
  async applyStep(step: PreparedStep): Promise<ApplyOutcome> {
    const keys = new ProjectionKeys(step.namespace);
    const known = new Set<string>();
    let { args, applied, duplicates } = step;
    let events: readonly LedgerEvent[] | undefined;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const reply = await runApplyBatch(this.redis, args);
      if (reply.kind === 'applied') return { applied, duplicates };
      for (const token of reply.tokens) known.add(token);
      events ??= eventsOf(step.events);
      const delta = foldEvents(events, { isApplied: (token) => known.has(token) });
      args = batchStepArgs(keys, delta, step.offsets, this.options);
      ({ applied, duplicates } = delta);
    }
    throw new Error(
      `batch not applied after ${MAX_ATTEMPTS} attempts: events keep being applied concurrently`,
    );
  }
}

function eventsOf(events: StepEvents): readonly LedgerEvent[] {
  return typeof events === 'function' ? events() : events;
}
