import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Cluster } from 'ioredis';
import {
  BreakerOpenError,
  classifyBackendError,
  countsAsOutage,
  pipelineDeadlineMs,
  withDeadline,
} from './backend-failure';
import { CircuitBreaker, DEFAULT_BREAKER, type BreakerState } from './circuit-breaker';
import { callDecide, decideArgs, defineDecide, parseDecideReply, type ScriptOutcome } from './decide.script';
import type { RedisClient } from '@tally/redis';
import type { DecisionObserver } from './decision-observer';
import type { DecisionPlan } from './decision-plan';
import { appendDegradedEntries } from './degraded-append';
import type { DegradedEntry } from './degraded-entry';
import type { BackendFailure } from './decision.types';
import { DECISION_OBSERVER, ENGINE_OPTIONS, ENGINE_REDIS } from './engine.constants';
import type { EngineOptions } from './engine.options';
import { unpackWindowState } from './policy-state-hash';
import { fallsShort, type ReplicaWait } from './replica-wait';
import { callRelease, defineRelease, parseReleaseReply, type ReleaseReply } from './release.script';
import {
  callExtend,
  defineExtend,
  parseExtendReply,
  type ExtendArgs,
  type ExtendReply,
} from './extend.script';

export type StepResult<T> = { ok: true; value: T } | { ok: false; failure: BackendFailure };

export type EngineHealthStatus = 'healthy' | 'degraded' | 'unavailable';

export interface EngineHealth {
  readonly status: EngineHealthStatus;
  readonly breaker: BreakerState;
  /** ioredis connection status (`ready`, `connecting`, `reconnecting`, `end`, …). */
  readonly connection: string;
  /** The last connection error ioredis reported, when not healthy. */
  readonly lastError?: string;
}

/**
 * The Redis adapter of the hot path: runs decide.lua for plans, under a deadline per step and a
 * circuit breaker, and turns every failure into one of the three backend reasons. No business rule.
 */
@Injectable()
export class EngineService implements OnModuleInit, OnModuleDestroy {
  private readonly breaker: CircuitBreaker;
  private readonly closeTasks: (() => Promise<void>)[] = [];
  private lastError: string | undefined;
  /** When Redis last answered anything (performance.now()): tells a slow Redis from a dead one. */
  private lastAnswerAt = -Infinity;

  constructor(
    @Inject(ENGINE_REDIS) private readonly redis: RedisClient,
    @Inject(ENGINE_OPTIONS) private readonly options: EngineOptions,
    @Optional() @Inject(DECISION_OBSERVER) private readonly observer?: DecisionObserver,
  ) {
    defineDecide(redis);
    defineRelease(redis);
    defineExtend(redis);
    // Connection errors surface through calls (breaker, fail modes) and health; without a listener
    // ioredis would also print every reconnect attempt as an unhandled error event.
    redis.on('error', (error: Error) => (this.lastError = error.message));
    this.breaker = new CircuitBreaker(
      options.breaker ?? DEFAULT_BREAKER,
      options.clock ?? Date.now,
      (state) => this.observer?.onBreaker?.(state),
    );
  }

  /** Give the connection a moment at boot; readiness reports the truth either way. */
  async onModuleInit(): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Runs the registered close tasks (the degraded ledger's last flush) and only then closes the
   * connection. Nest calls the destroy hooks of one module's providers concurrently, so the order
   * cannot be left to it: a flush racing QUIT would be refused.
   */
  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled(this.closeTasks.map((task) => task()));
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Work that needs the connection at shutdown; each task bounds its own duration. */
  beforeClose(task: () => Promise<void>): void {
    this.closeTasks.push(task);
  }

  /** One decision, one script, one round trip (durable mode: the script and a WAIT, pipelined). */
  run(plan: DecisionPlan): Promise<StepResult<ScriptOutcome>> {
    if (this.options.replicaWait !== undefined) return this.runDurable(plan, this.options.replicaWait);
    return this.step(async () =>
      parseDecideReply(await callDecide<Promise<unknown>>(this.redis, this.args(plan)), plan.windows.length),
    );
  }

  /**
   * The script and `WAIT` in one pipeline: one round trip, and on Cluster one node (the pipeline goes
   * to the script's slot; WAIT has no key and follows it), so WAIT counts the replicas of the master
   * that ran the script. The step's deadline grows by WAIT's timeout, so a slow replica is told from
   * a slow master: the first answers `fallsShort`, the second `backend_timeout` as ever.
   */
  private async runDurable(plan: DecisionPlan, wait: ReplicaWait): Promise<StepResult<ScriptOutcome>> {
    const step = await this.step(async () => {
      const pipeline = this.redis.pipeline();
      callDecide(pipeline, this.args(plan));
      pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
      const [[scriptError, reply], [waitError, acknowledged]] = (await this.execFollowing(pipeline)) ?? [];
      const error = scriptError ?? waitError;
      if (error) throw this.followFailover(error);
      return { outcome: parseDecideReply(reply, plan.windows.length), acknowledged: Number(acknowledged) };
    }, this.options.backendTimeoutMs + wait.timeoutMs);
    if (!step.ok) return step;
    const { outcome, acknowledged } = step.value;
    return fallsShort(outcome, acknowledged, wait)
      ? this.report('backend_timeout')
      : { ok: true, value: outcome };
  }

  /**
   * Many independent decisions in one pipeline (one round trip, one deadline that grows with the
   * number of scripts: see `pipelineDeadlineMs`). On Cluster a pipeline must stay on one node, so
   * plans are grouped per shard and the groups run in parallel.
   */
  async runMany(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]> {
    if (!(this.redis instanceof Cluster)) return this.runPipeline(plans);
    const groups = new Map<number, number[]>();
    plans.forEach((p, i) => groups.set(p.shard.shard, [...(groups.get(p.shard.shard) ?? []), i]));
    const results: StepResult<ScriptOutcome>[] = new Array<StepResult<ScriptOutcome>>(plans.length);
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const out = await this.runPipeline(indexes.map((i) => plans[i]));
        indexes.forEach((planIndex, k) => (results[planIndex] = out[k]));
      }),
    );
    return results;
  }

  /** A peek of the plan's windows plus their raw hashes, in one pipeline (same slot, same node). */
  peekWithState(
    plan: DecisionPlan,
  ): Promise<StepResult<{ outcome: ScriptOutcome; hashes: Record<string, string>[] }>> {
    return this.step(async () => {
      const pipeline = this.redis.pipeline();
      callDecide(pipeline, this.args(plan));
      // A concurrency window is a sorted set (decide.lua): read as member → expiry. A rate window is
      // one field of its policy's state hash, unpacked into the fields the view names.
      for (const w of plan.windows)
        if (w.algorithm === 'concurrency') pipeline.zrange(w.redisKey, '0', '-1', 'WITHSCORES');
        else pipeline.hget(w.redisKey, w.name);
      // After a failover the slot map may still name the old master: followed as durable steps do, or
      // every state read of those slots fails (and counts toward the breaker) until the next refresh.
      const replies = (await this.execFollowing(pipeline)) ?? [];
      const failed = replies.find(([error]) => error);
      if (failed?.[0]) throw this.followFailover(failed[0]);
      return {
        outcome: parseDecideReply(replies[0][1], plan.windows.length),
        hashes: replies
          .slice(1)
          .map(([, h], i) =>
            Array.isArray(h)
              ? pairs(h as string[])
              : unpackWindowState(plan.windows[i].algorithm, h as string | null),
          ),
      };
    });
  }

  /**
   * Runs release.lua for one lease (`tenants`: the token's tenant list, null = any), as one step
   * under the same deadline and breaker as decisions. Not durable-mode aware: a release lost in a
   * failover only means its units come back at the lease's expiry instead of now.
   */
  release(
    keys: { record: string; outbox: string },
    leaseId: string,
    tenants: readonly string[] | null,
  ): Promise<StepResult<ReleaseReply>> {
    return this.step(async () =>
      parseReleaseReply(await callRelease(this.redis, keys, leaseId, tenants, this.options.scriptNow?.())),
    );
  }

  /**
   * Runs extend.lua for one lease, as `release` runs release.lua (same deadline and breaker, not
   * durable-mode aware: an extension lost in a failover leaves the lease to its earlier expiry).
   */
  extendLease(record: string, args: ExtendArgs): Promise<StepResult<ExtendReply>> {
    return this.step(async () =>
      parseExtendReply(await callExtend(this.redis, record, args, this.options.scriptNow?.())),
    );
  }

  /**
   * Appends buffered degraded entries to their shard outboxes (see `appendDegradedEntries`), as one
   * step: through the breaker (a flush while it is open is refused; after the cooldown it may be the
   * probe) and under `deadlineMs`. Returns the entries Redis acknowledged; none when the step failed.
   */
  async appendDegraded(
    entries: readonly DegradedEntry[],
    deadlineMs: number,
  ): Promise<ReadonlySet<DegradedEntry>> {
    const step = await this.step(() => appendDegradedEntries(this.redis, entries), deadlineMs);
    return step.ok ? step.value : new Set();
  }

  health(): EngineHealth {
    const breaker = this.breaker.state;
    const connection = this.redis.status;
    const status: EngineHealthStatus =
      breaker === 'open' || connection !== 'ready'
        ? 'unavailable'
        : breaker === 'half_open' || this.breaker.consecutiveFailures > 0
          ? 'degraded'
          : 'healthy';
    return status === 'healthy'
      ? { status, breaker, connection }
      : { status, breaker, connection, lastError: this.lastError };
  }

  private args(plan: DecisionPlan): (string | number)[] {
    return decideArgs(plan, this.options.idempotencyTtlMs, this.options.scriptNow?.());
  }

  /** Durable mode: one WAIT after the batch's scripts covers them all (see `runDurable`). */
  private async runPipeline(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]> {
    const wait = this.options.replicaWait;
    const step = await this.step(
      async () => {
        const pipeline = this.redis.pipeline();
        for (const plan of plans) callDecide(pipeline, this.args(plan));
        if (wait === undefined) return { replies: (await pipeline.exec()) ?? [], acknowledged: 0 };
        pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
        const replies = (await this.execFollowing(pipeline)) ?? [];
        const [waitError, acknowledged] = replies[plans.length];
        if (waitError) throw this.followFailover(waitError);
        for (const [error] of replies) if (error) this.followFailover(error);
        return { replies: replies.slice(0, plans.length), acknowledged: Number(acknowledged) };
      },
      pipelineDeadlineMs(this.options.backendTimeoutMs, plans.length) + (wait?.timeoutMs ?? 0),
    );
    if (!step.ok) return plans.map(() => step);
    return step.value.replies.map(([error, reply], i): StepResult<ScriptOutcome> => {
      if (error) return this.report(classifyBackendError(error));
      const outcome = parseDecideReply(reply, plans[i].windows.length);
      if (wait !== undefined && fallsShort(outcome, step.value.acknowledged, wait))
        return this.report('backend_timeout');
      return { ok: true, value: outcome };
    });
  }

  /**
   * Durable mode on Cluster: ioredis follows a moved slot (MOVED, a closed connection to a dead
   * master) by itself for a single command, but not in a pipeline one of whose commands succeeded,
   * and WAIT always succeeds. Without this its slot map would keep naming the dead master (this
   * client refreshes it on no timer), failing every durable decision of those slots meanwhile.
   * ioredis merges concurrent refreshes into one. `execFollowing` runs durable pipelines and state
   * reads with it, whether exec rejects as a whole or answers an error per command.
   */
  private async execFollowing(pipeline: ReturnType<RedisClient['pipeline']>) {
    try {
      return await pipeline.exec();
    } catch (error) {
      throw error instanceof Error ? this.followFailover(error) : error;
    }
  }

  private followFailover(error: Error): Error {
    if (this.redis instanceof Cluster && classifyBackendError(error) === 'backend_unavailable')
      this.redis.refreshSlotsCache();
    return error;
  }

  /** Breaker admission, deadline, classification and breaker accounting around one Redis step. */
  private async step<T>(
    work: () => Promise<T>,
    deadlineMs = this.options.backendTimeoutMs,
  ): Promise<StepResult<T>> {
    if (!this.breaker.tryAcquire()) return this.report(classifyBackendError(new BreakerOpenError()));
    const startedAt = performance.now();
    const probing = this.breaker.state === 'half_open';
    const pending = work();
    try {
      const value = await withDeadline(pending, deadlineMs);
      this.lastAnswerAt = performance.now();
      this.breaker.success();
      return { ok: true, value };
    } catch (error) {
      const failure = classifyBackendError(error);
      if (failure === 'backend_error') this.lastAnswerAt = performance.now();
      if (failure === 'backend_timeout' && !probing) this.judgeLater(pending, startedAt, deadlineMs);
      // Only a dead-looking Redis counts (see countsAsOutage); the rest just frees the probe slot.
      else if (countsAsOutage(failure, { startedAt, probing, lastAnswerAt: this.lastAnswerAt }))
        this.breaker.failure();
      else this.breaker.release();
      return this.report(failure);
    }
  }

  /**
   * A timed-out step is judged one deadline later, not at once: on a CPU-starved machine Redis itself
   * may not run for a while and then answer everything late. A late answer meanwhile — to this step or
   * to any other — shows a slow Redis, which the breaker must not cut off (that would turn a slowdown
   * into a full outage of fail_closed traffic); only silence counts, as from a hung Redis.
   */
  private judgeLater(pending: Promise<unknown>, startedAt: number, graceMs: number): void {
    void pending.then(
      () => (this.lastAnswerAt = performance.now()),
      (error: unknown) => {
        if (classifyBackendError(error) === 'backend_error') this.lastAnswerAt = performance.now();
      },
    );
    setTimeout(() => {
      // Open or half-open, the breaker is already judging Redis by its own probe.
      if (this.breaker.state !== 'closed') return;
      const step = { startedAt, probing: false, lastAnswerAt: this.lastAnswerAt };
      if (countsAsOutage('backend_timeout', step)) this.breaker.failure();
    }, graceMs).unref();
  }

  private report(failure: BackendFailure): { ok: false; failure: BackendFailure } {
    this.observer?.onBackendError?.(failure);
    return { ok: false, failure };
  }
}

/** A flat `[member, score, …]` reply as a record. */
function pairs(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}
