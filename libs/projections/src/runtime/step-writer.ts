import { parseLedgerEvent, type LedgerEvent } from '@tally/events';
import type { LedgerRecord } from '@tally/ledger';
import type { OffsetMark } from '../sink/batch-step';
import { EventFolding } from '../fold/fold-events';
import { offsetField } from '../sink/projection-keys';
import type { ApplyOutcome, ProjectionStore, RefusedEvent, ShardRef } from '../sink/projection.store';

export interface StepHooks {
  /** Told of every applied step, in order, with the offsets it stored. */
  readonly onStep?: (outcome: ApplyOutcome, offsets: readonly OffsetMark[]) => void;
  /** Told once, of the first failed step: no later step of this writer will be sent. */
  readonly onFailure?: (error: unknown) => void;
  /**
   * Takes the events a step refuses, before the step that stores offsets past them is written
   * (`RefusalSink`); a rejection fails the step. Absent: refused events are only counted.
   */
  readonly onRefused?: (refused: readonly RefusedRecord[]) => Promise<void>;
  /**
   * Tracing on: called for each added event that carries a `traceparent`; what it returns is called
   * once the step holding the event is applied (no argument) or failed (the error).
   */
  readonly traceEvent?: (event: LedgerEvent) => ((error?: unknown) => void) | undefined;
}

/** A refused event and, when the writer was given records, the record it was read from. */
export interface RefusedRecord extends RefusedEvent {
  readonly source?: { readonly topic: string; readonly partition: number; readonly record: LedgerRecord };
}

/** Records `[from, to)` of a step came from this partition. */
interface RecordRun {
  readonly to: number;
  readonly topic: string;
  readonly partition: number;
}

/**
 * Writes events into one shard of a namespace in atomic steps (`ProjectionStore.applyStep`) cut by their Redis
 * cost: a step closes once its delta holds `maxCells` cells (`EventFolding.cells`), whatever the
 * number of events. Few distinct cells (events of few keys) make long steps that aggregate much;
 * many make short steps, so one step never holds the single-threaded Redis, which also serves the
 * decision hot path, for long.
 *
 * Steps run one after the other, in the order they were cut, each with the offsets its events
 * reach. While one runs, the next ones are folded: `add` returns once the step `WAITING_STEPS`
 * before the one it cut is applied, so at most that many steps wait behind the running one
 * (backpressure). A failed step fails every later `add` and `flush`; the steps after it are never
 * sent.
 */
export class StepWriter {
  private folding = new EventFolding();
  private events: LedgerEvent[] = [];
  private records: LedgerRecord[] = [];
  private runs: RecordRun[] = [];
  private offsets = new Map<string, OffsetMark>();
  /** The span ends of the traced events of the step being folded (`StepHooks.traceEvent`). */
  private traced: ((error?: unknown) => void)[] = [];
  private tail: Promise<void> = Promise.resolve();
  /** The completions of the last `WAITING_STEPS` steps before `tail`, oldest first. */
  private readonly ahead: Promise<void>[] = [];
  private outcome = { applied: 0, duplicates: 0, refused: 0 };
  private failure?: unknown;

  constructor(
    private readonly store: Pick<ProjectionStore, 'prepareStep' | 'applyStep'>,
    private readonly shard: ShardRef,
    private readonly maxCells: number,
    private readonly hooks: StepHooks = {},
  ) {}

  /**
   * Adds events that reach `offset` (per partition, the highest mark wins). With `records` (the
   * record of `offset`'s partition each event was parsed from, index for index) the step keeps
   * those instead of the events for a refold, so the parsed events are garbage as soon as they are
   * folded, and can name the record of an event it refuses. Give records always or never.
   */
  async add(
    events: readonly LedgerEvent[],
    offset: OffsetMark,
    records?: readonly LedgerRecord[],
  ): Promise<void> {
    // Nothing after a failed step is ever sent: folding more would only be thrown away.
    if (this.failure !== undefined) throw asError(this.failure);
    for (const event of events) this.folding.add(event);
    const trace = this.hooks.traceEvent;
    if (trace !== undefined) this.trace(trace, events);
    if (records === undefined) for (const event of events) this.events.push(event);
    else {
      for (const record of records) this.records.push(record);
      this.runs.push({ to: this.records.length, topic: offset.topic, partition: offset.partition });
    }
    const id = offsetField(offset.topic, offset.partition);
    const known = this.offsets.get(id);
    if (known === undefined || BigInt(known.nextOffset) < BigInt(offset.nextOffset))
      this.offsets.set(id, offset);
    if (this.folding.cells >= this.maxCells) await this.cut();
  }

  /**
   * Cuts a step of what is pending, however small (nothing more is coming for now: waiting for the
   * budget would only add lag). Returns like `add`, once the step `WAITING_STEPS` before it is
   * applied.
   */
  async cutPending(): Promise<void> {
    if (this.events.length > 0 || this.records.length > 0 || this.offsets.size > 0) await this.cut();
  }

  /** Writes what is left and resolves once every step is applied, with the totals of all steps. */
  async flush(): Promise<ApplyOutcome> {
    await this.cutPending();
    await this.tail;
    return { ...this.outcome };
  }

  private trace(trace: NonNullable<StepHooks['traceEvent']>, events: readonly LedgerEvent[]): void {
    for (const event of events) {
      if (event.traceparent === undefined) continue;
      const end = trace(event);
      if (end !== undefined) this.traced.push(end);
    }
  }

  private async cut(): Promise<void> {
    const { events, records, runs, traced } = this;
    const step = this.store.prepareStep(
      this.shard,
      records.length === 0 ? events : () => [...events, ...records.map((r) => reparse(r.value))],
      [...this.offsets.values()],
      this.folding.delta(),
    );
    const onRefused = this.hooks.onRefused;
    const refusals =
      onRefused &&
      ((refused: readonly RefusedEvent[]) =>
        onRefused(refused.map((r) => withSource(r, r.index - events.length, records, runs))));
    this.folding = new EventFolding();
    this.events = [];
    this.records = [];
    this.runs = [];
    this.offsets = new Map();
    this.traced = [];
    const previous = this.tail;
    this.ahead.push(previous);
    if (this.ahead.length > WAITING_STEPS) void this.ahead.shift(); // observed by `tail`'s catch
    const holdUntil = this.ahead[0];
    this.tail = previous.then(async () => {
      const outcome = await this.store.applyStep(step, refusals);
      this.outcome.applied += outcome.applied;
      this.outcome.duplicates += outcome.duplicates;
      this.outcome.refused += outcome.refused;
      this.hooks.onStep?.(outcome, step.offsets);
    });
    if (traced.length > 0)
      this.tail.then(
        () => traced.forEach((end) => end()),
        (error: unknown) => traced.forEach((end) => end(error)),
      );
    // Observed here so a failure waiting for the next add/flush is not an unhandled rejection, and
    // told at once: an idle writer may see no next add for a long time.
    this.tail.catch((error: unknown) => {
      if (this.failure !== undefined) return;
      this.failure = error;
      this.hooks.onFailure?.(error);
    });
    await holdUntil;
  }
}

/**
 * Steps allowed to wait behind the running one. The relay's events alternate between usage-heavy
 * steps (many cells per event: Redis as slow as the fold) and decision-heavy ones (one cell per
 * event: Redis idle soon); with one waiting step the fold stalls behind every usage-heavy step, a
 * fifth of its time. Three let Redis and the fold even out (a median of 51k events/s against 44k
 * over alternating runs of one member), for at most three steps of lag while saturated.
 */
const WAITING_STEPS = 3;

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** Adds the record a refused event was read from (the step's records follow its bare events). */
function withSource(
  refused: RefusedEvent,
  at: number,
  records: readonly LedgerRecord[],
  runs: readonly RecordRun[],
): RefusedRecord {
  const record = records[at];
  const run = runs.find((r) => at < r.to);
  return record === undefined || run === undefined
    ? refused
    : { ...refused, source: { topic: run.topic, partition: run.partition, record } };
}

/** A record the writer folded parsed as a valid event once: it does again. */
function reparse(record: Buffer | null): LedgerEvent {
  if (record === null) throw new Error('a folded record has no value');
  const parsed = parseLedgerEvent(record);
  if (!parsed.ok) throw new Error(`a folded record no longer parses: ${parsed.reason}`);
  return parsed.event;
}
