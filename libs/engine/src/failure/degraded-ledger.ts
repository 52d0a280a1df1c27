import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DegradedBuffer } from './degraded-buffer';
import { degradedEntry, type DegradedEntry } from './degraded-entry';
import { DEFAULT_DEGRADED_LEDGER, type DegradedLedgerOptions } from './degraded-ledger.options';
import type { DecisionObserver } from '../decision-observer';
import type { DecisionPlan } from '../plan/decision-plan';
import type { BackendFailure } from '../plan/decision.types';
import { DECISION_OBSERVER, DEGRADED_OUTBOX, ENGINE_OPTIONS } from '../engine.constants';
import type { EngineOptions } from '../engine.options';
import type { DegradedOutbox } from './degraded-outbox';

/**
 * Degraded decisions into the ledger. A decision allowed under fail_open while Redis failed was spent
 * by the caller (billing must see it) and belongs in the audit trail, but decide.lua never ran, so
 * nothing reached the outbox. Each one is kept here, in memory, as the outbox entry the script would
 * have written (`outcome: 'degraded'`, `degraded_cause`, the local time), and appended to its shard's
 * outbox once Redis answers again: on the next successful decision step, or by a probe every
 * `probeIntervalMs` while entries wait. Each shard's part of a flush is its own Redis step: what a
 * shard acknowledged leaves the buffer, what failed stays for that shard only, and the other shards
 * keep draining. An entry leaves the buffer only after Redis acknowledged its append; a lost
 * acknowledgement means a retry, which degraded-append.lua recognises by the decision's marker (kept
 * `markerTtlMs`) and does not append again. The relay then publishes it like any entry: a usage
 * event (cost > 0) and a decision event, which the projector lists in the audit trail as `degraded`.
 *
 * Not recorded: fail_closed refusals (503: nothing was spent) and cost-0 peeks (an allowed peek writes
 * no outbox entry either).
 *
 * A timed-out step may have committed after all (ADR 0001): then the decision is both in the outbox
 * as `allowed` and here as `degraded`, under the same id, and the projector keeps whichever it reads
 * first: billed once either way, even when the two times fall in different UTC hours (its dedup marks
 * every event in the hour of its id's time too). Not checked here: nothing in Redis says whether a
 * decision committed short of a record per decision, which would cost every decision a write.
 *
 * Limitations (best effort, by design: degraded mode trades exactness for availability):
 * - the buffer is in this process's memory: a crash or kill of the API loses what is unflushed; a
 *   graceful stop tries one last flush within `shutdownTimeoutMs`;
 * - it is bounded by `capacity`: beyond it degraded decisions are dropped, counted by
 *   `DecisionObserver.onDegradedDropped` and logged at most once per `dropLogIntervalMs`.
 */
@Injectable()
export class DegradedLedger {
  private readonly settings: DegradedLedgerOptions;
  private readonly buffer: DegradedBuffer;
  private readonly clock: () => number;
  private readonly logger = new Logger(DegradedLedger.name);
  private flushing: Promise<void> | undefined;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  private unreportedDrops = 0;
  private lastDropLogMs = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(DEGRADED_OUTBOX) private readonly outbox: DegradedOutbox,
    @Inject(ENGINE_OPTIONS) options: EngineOptions,
    @Optional() @Inject(DECISION_OBSERVER) private readonly observer?: DecisionObserver,
  ) {
    this.settings = { ...DEFAULT_DEGRADED_LEDGER, ...options.degradedLedger };
    this.buffer = new DegradedBuffer(this.settings.capacity);
    this.clock = options.clock ?? Date.now;
    outbox.beforeClose(() => this.close());
  }

  /** Degraded decisions waiting for Redis. */
  get size(): number {
    return this.buffer.size;
  }

  /** Keeps a degraded decision for the ledger. Cheap and synchronous: it is on the hot path. */
  record(plan: DecisionPlan, cause: BackendFailure): void {
    if (plan.cost === 0) return;
    if (!this.buffer.push(degradedEntry(plan, cause, this.clock()))) {
      this.dropped(1);
      return;
    }
    this.observer?.onDegradedBuffered?.(this.buffer.size);
    this.scheduleProbe();
  }

  /** Redis just answered a step: if entries wait, this is the moment to flush them. */
  nudge(): void {
    if (this.buffer.size > 0 && this.flushing === undefined) void this.flush();
  }

  /**
   * Appends waiting entries, batch after batch, until every shard's queue is empty or has failed once
   * in this run (that shard is failing: the probe or the next success retries it). Single-flight:
   * concurrent calls share one run. Never rejects.
   */
  flush(): Promise<void> {
    this.flushing ??= this.drain()
      .catch((error: unknown) => this.logger.error(`flush failed: ${String(error)}`))
      .finally(() => {
        this.flushing = undefined;
        this.scheduleProbe();
      });
    return this.flushing;
  }

  /** Graceful stop: no more probes; one last flush within `shutdownTimeoutMs`; says what is lost. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probe);
    this.probe = undefined;
    if (this.buffer.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>(
      (resolve) => (timer = setTimeout(resolve, this.settings.shutdownTimeoutMs)),
    );
    await Promise.race([this.lastFlush(), deadline]).finally(() => clearTimeout(timer));
    if (this.buffer.size > 0)
      this.logger.error(
        `stopping with ${this.buffer.size} degraded decisions not in the ledger: they are lost`,
      );
  }

  private async lastFlush(): Promise<void> {
    // A flush already running may stop at a failed batch; one more attempt is the last chance.
    await this.flushing;
    await this.flush();
  }

  private async drain(): Promise<void> {
    const failed = new Set<number>();
    for (;;) {
      const batch: DegradedEntry[] = this.buffer.head(this.settings.batchSize, failed);
      if (batch.length === 0) return;
      const acked = await this.outbox.appendDegraded(batch, this.settings);
      this.buffer.settle(batch, acked);
      for (const entry of batch) if (!acked.has(entry)) failed.add(entry.shard);
      this.observer?.onDegradedBuffered?.(this.buffer.size);
    }
  }

  private scheduleProbe(): void {
    if (this.closed || this.probe !== undefined || this.buffer.size === 0) return;
    this.probe = setTimeout(() => {
      this.probe = undefined;
      void this.flush();
    }, this.settings.probeIntervalMs);
    // A pending probe must not keep a stopping process alive; close() flushes instead.
    this.probe.unref();
  }

  private dropped(n: number): void {
    this.observer?.onDegradedDropped?.(n);
    this.unreportedDrops += n;
    const now = this.clock();
    if (now - this.lastDropLogMs < this.settings.dropLogIntervalMs) return;
    this.logger.warn(
      `degraded ledger full (${this.settings.capacity} waiting for Redis): dropped ${this.unreportedDrops} degraded decisions, lost to billing and audit`,
    );
    this.lastDropLogMs = now;
    this.unreportedDrops = 0;
  }
}
