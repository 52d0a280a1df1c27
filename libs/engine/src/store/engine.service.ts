import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Cluster } from 'ioredis';
import {
  BreakerOpenError,
  classifyBackendError,
  countsAsOutage,
  pipelineDeadlineMs,
  withDeadline,
} from '../failure/backend-failure';
import { DEFAULT_BREAKER, type BreakerState } from '../failure/circuit-breaker';
import { NodeBreakers, type NodeBreaker } from '../failure/node-breakers';
import { RedisNodes } from './redis-nodes';
import { callDecide, decideArgs, defineDecide, parseDecideReply, type ScriptOutcome } from '../decide.script';
import type { RedisClient } from '@tally/redis';
import type { DecisionObserver } from '../decision-observer';
import type { DecisionPlan } from '../plan/decision-plan';
import { appendShardEntries, degradedShards } from '../failure/degraded-append';
import type { DegradedEntry } from '../failure/degraded-entry';
import type { DegradedLedgerOptions } from '../failure/degraded-ledger.options';
import type { BackendFailure } from '../plan/decision.types';
import { DECISION_OBSERVER, ENGINE_OPTIONS, ENGINE_REDIS } from '../engine.constants';
import type { EngineOptions } from '../engine.options';
import type { DecisionStore, PlanState, StepResult } from '../decision-store';
import type { DegradedOutbox } from '../failure/degraded-outbox';
import type { LeaseStore } from '../leases/lease-store';
import { unpackWindowState } from '../policy-state-hash';
import { fallsShort, type ReplicaWait } from './replica-wait';
import { callRelease, defineRelease, parseReleaseReply, type ReleaseReply } from '../leases/release.script';
import {
  callExtend,
  defineExtend,
  parseExtendReply,
  type ExtendArgs,
  type ExtendReply,
} from '../leases/extend.script';

export type EngineHealthStatus = 'healthy' | 'degraded' | 'unavailable';

export interface EngineHealth {
  readonly status: EngineHealthStatus;
  /** The worst breaker of the nodes that serve slots now (one node: its breaker). */
  readonly breaker: BreakerState;
  /** Each serving node's breaker (`host:port` of a Cluster master; `redis` for a single Redis). */
  readonly nodes: Readonly<Record<string, BreakerState>>;
  /** ioredis connection status (`ready`, `connecting`, `reconnecting`, `end`, …). */
  readonly connection: string;
  /** The last connection error ioredis reported, when not healthy. */
  readonly lastError?: string;
}

/**
 * The Redis adapter of the hot path: runs decide.lua for plans, under a deadline per step and a
 * circuit breaker per Redis node (the master serving the step's slot), and turns every failure into
 * one of the three backend reasons. No business rule.
 */
@Injectable()
export class EngineService
  implements DecisionStore, LeaseStore, DegradedOutbox, OnModuleInit, OnModuleDestroy
{
  private readonly breakers: NodeBreakers;
  private readonly cluster: Cluster | undefined;
  private readonly nodes: RedisNodes;
  private readonly closeTasks: (() => Promise<void>)[] = [];
  private lastError: string | undefined;

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
    this.cluster = redis instanceof Cluster ? redis : undefined;
    this.nodes = new RedisNodes(this.cluster);
    const breaker = options.breaker ?? DEFAULT_BREAKER;
    const clock = options.clock ?? Date.now;
    this.breakers = new NodeBreakers(
      breaker,
      clock,
      () => this.nodes.serving(),
      (worst, open) => this.observer?.onBreaker?.(worst, open),
    );
    // After a failover the slot map names the promoted replica: the dead master's breaker goes.
    this.cluster?.on('refresh', () => this.breakers.refresh());
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
    return this.step(this.nodeOfShard(plan.shard.shard), async () =>
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
    const step = await this.step(
      this.nodeOfShard(plan.shard.shard),
      async () => {
        const pipeline = this.redis.pipeline();
        callDecide(pipeline, this.args(plan));
        pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
        const [[scriptError, reply], [waitError, acknowledged]] = (await this.execFollowing(pipeline)) ?? [];
        const error = scriptError ?? waitError;
        if (error) throw this.followFailover(error);
        return { outcome: parseDecideReply(reply, plan.windows.length), acknowledged: Number(acknowledged) };
      },
      this.options.backendTimeoutMs + wait.timeoutMs,
    );
    if (!step.ok) return step;
    const { outcome, acknowledged } = step.value;
    return fallsShort(outcome, acknowledged, wait) ? this.shortOf(outcome) : { ok: true, value: outcome };
  }

  /** An allowed answer too few replicas acknowledged: a `backend_timeout`, naming a replay as such. */
  private shortOf(outcome: ScriptOutcome): StepResult<ScriptOutcome> {
    const failure = this.report('backend_timeout');
    return outcome.kind === 'replayed' ? { ...failure, unacknowledgedReplay: outcome } : failure;
  }

  /**
   * Many independent decisions in one pipeline (one round trip, one deadline that grows with the
   * number of scripts: see `pipelineDeadlineMs`). On Cluster a pipeline must stay on one node, so
   * plans are grouped per shard and the groups run in parallel.
   */
  async runMany(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]> {
    if (this.cluster === undefined) return this.runPipeline(plans);
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
  peekWithState(plan: DecisionPlan): Promise<StepResult<PlanState>> {
    return this.step(this.nodeOfShard(plan.shard.shard), async () => {
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
    return this.step(this.nodeOfKey(keys.record), async () =>
      parseReleaseReply(await callRelease(this.redis, keys, leaseId, tenants, this.options.scriptNow?.())),
    );
  }

  /**
   * Runs extend.lua for one lease, as `release` runs release.lua (same deadline and node breaker, not
   * durable-mode aware: an extension lost in a failover leaves the lease to its earlier expiry).
   */
  extendLease(record: string, args: ExtendArgs): Promise<StepResult<ExtendReply>> {
    return this.step(this.nodeOfKey(record), async () =>
      parseExtendReply(await callExtend(this.redis, record, args, this.options.scriptNow?.())),
    );
  }

  /**
   * Appends buffered degraded entries to their shard outboxes (see `appendShardEntries`), each
   * shard's part as its own step: through the breaker of the node that serves the shard and under
   * `flushTimeoutMs`. A shard that fails or times out costs only its own entries (and counts only
   * toward its own node's breaker); what the others acknowledged is returned.
   */
  async appendDegraded(
    entries: readonly DegradedEntry[],
    settings: Pick<DegradedLedgerOptions, 'flushTimeoutMs' | 'markerTtlMs'>,
  ): Promise<ReadonlySet<DegradedEntry>> {
    const steps = await Promise.all(
      degradedShards(entries).map((group) =>
        this.step(
          this.nodeOfShard(group[0].shard),
          () => appendShardEntries(this.redis, group, settings.markerTtlMs),
          settings.flushTimeoutMs,
        ),
      ),
    );
    return new Set(steps.flatMap((step) => (step.ok ? step.value : [])));
  }

  /**
   * Unavailable when the connection is not ready or every serving node's breaker is open (nothing
   * can be answered from Redis); degraded when some node's breaker is open or half-open, or steps
   * failed lately (the decisions of those nodes' shards run on their fail modes); else healthy.
   */
  health(): EngineHealth {
    const summary = this.breakers.summary();
    const breaker = summary.worst;
    const nodes = summary.nodes;
    const connection = this.redis.status;
    const serving = Object.keys(nodes).length;
    const status: EngineHealthStatus =
      connection !== 'ready' || (serving > 0 && summary.open === serving)
        ? 'unavailable'
        : breaker !== 'closed' || summary.failing
          ? 'degraded'
          : 'healthy';
    return status === 'healthy'
      ? { status, breaker, nodes, connection }
      : { status, breaker, nodes, connection, lastError: this.lastError };
  }

  /** The breaker of the node that serves a shard's slot now (the one node of a single Redis). */
  private nodeOfShard(shard: number): NodeBreaker {
    return this.breakers.of(this.nodes.ofShard(shard));
  }

  private nodeOfKey(key: string): NodeBreaker {
    return this.breakers.of(this.nodes.ofKey(key));
  }

  private args(plan: DecisionPlan): (string | number)[] {
    return decideArgs(plan, this.options.idempotencyTtlMs, this.options.scriptNow?.());
  }

  /** Durable mode: one WAIT after the batch's scripts covers them all (see `runDurable`). */
  private async runPipeline(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]> {
    const wait = this.options.replicaWait;
    const step = await this.step(
      this.nodeOfShard(plans[0].shard.shard),
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
        return this.shortOf(outcome);
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
    if (this.cluster !== undefined && classifyBackendError(error) === 'backend_unavailable')
      this.cluster.refreshSlotsCache();
    return error;
  }

  /**
   * Breaker admission, deadline, classification and breaker accounting around one Redis step, on the
   * breaker of the node it goes to: a dead node opens its own breaker, not the other nodes'.
   */
  private async step<T>(
    node: NodeBreaker,
    work: () => Promise<T>,
    deadlineMs = this.options.backendTimeoutMs,
  ): Promise<StepResult<T>> {
    const breaker = node.breaker;
    if (!breaker.tryAcquire()) return this.report(classifyBackendError(new BreakerOpenError()));
    const startedAt = performance.now();
    const probing = breaker.state === 'half_open';
    const pending = work();
    try {
      const value = await withDeadline(pending, deadlineMs);
      node.lastAnswerAt = performance.now();
      breaker.success();
      return { ok: true, value };
    } catch (error) {
      const failure = classifyBackendError(error);
      if (failure === 'backend_error') node.lastAnswerAt = performance.now();
      if (failure === 'backend_timeout' && !probing) this.judgeLater(node, pending, startedAt, deadlineMs);
      // Only a dead-looking node counts (see countsAsOutage); the rest just frees the probe slot.
      else if (countsAsOutage(failure, { startedAt, probing, lastAnswerAt: node.lastAnswerAt }))
        breaker.failure();
      else breaker.release();
      return this.report(failure);
    }
  }

  /**
   * A timed-out step is judged one deadline later, not at once: on a CPU-starved machine Redis itself
   * may not run for a while and then answer everything late. A late answer meanwhile — to this step or
   * to any other of the same node — shows a slow node, which the breaker must not cut off (that would
   * turn a slowdown into a full outage of fail_closed traffic); only silence counts, as from a hung
   * node. Answers of other nodes prove nothing about this one.
   */
  private judgeLater(node: NodeBreaker, pending: Promise<unknown>, startedAt: number, graceMs: number): void {
    void pending.then(
      () => (node.lastAnswerAt = performance.now()),
      (error: unknown) => {
        if (classifyBackendError(error) === 'backend_error') node.lastAnswerAt = performance.now();
      },
    );
    setTimeout(() => {
      // Open or half-open, the breaker is already judging the node by its own probe.
      if (node.breaker.state !== 'closed') return;
      const step = { startedAt, probing: false, lastAnswerAt: node.lastAnswerAt };
      if (countsAsOutage('backend_timeout', step)) node.breaker.failure();
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
