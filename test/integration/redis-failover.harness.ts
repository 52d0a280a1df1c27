/**
 * What the Redis failover tests share: a 3 + 3 Redis Cluster started and crashed through
 * docker/local/redis-cluster.sh (by recorded pid, asynchronously so that traffic keeps running while
 * a node is killed or rejoins), a traffic generator that records every decision with its start and
 * end time, and the reading of every outbox stream after the fact.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { allShardKeys, type Decision, type DecisionService, type PolicyStateView } from '@tally/engine';
import type { PolicySet } from '@tally/policy';
import { testPolicy, uniqueName } from '@tally/testing';
import { Redis, type Cluster } from 'ioredis';

const run = promisify(execFile);
const root = resolve(__dirname, '../..');

/**
 * The local cluster: `up` with REDIS_CLUSTER_REPLICAS=1, `kill`/`start` one node, `down`. Without
 * `nodeTimeoutMs` the nodes get the script's settings (those the local stack ships, or the caller's
 * REDIS_CLUSTER_* environment).
 */
export class LocalCluster {
  constructor(
    readonly dir: string,
    readonly ports: readonly number[],
    private readonly nodeTimeoutMs?: number,
  ) {}

  up(): Promise<void> {
    return this.script('up', ...this.ports.map(String));
  }
  /** Stops every node by its recorded pid, then removes the nodes' data folder. */
  async down(): Promise<void> {
    await this.script('down');
    await rm(this.dir, { recursive: true, force: true });
  }
  kill(port: number): Promise<void> {
    return this.script('kill', String(port));
  }
  /** Resolves once the node is back as a replica in sync (the script's own barrier). */
  start(port: number): Promise<void> {
    return this.script('start', String(port));
  }

  /** The port of the master serving `slot` now, as a live node sees it (not the client's cached map). */
  async masterOf(slot: number, except?: number): Promise<number> {
    for (const port of this.ports) {
      if (port === except) continue;
      const node = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
      node.on('error', () => undefined); // a dead node: connect() rejects, the event need not print
      try {
        await node.connect();
        const ranges = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        const range = ranges.find(([from, to]) => from <= slot && slot <= to);
        if (range) return range[2][1];
      } catch {
        // a dead or restarting node: ask the next one
      } finally {
        node.disconnect();
      }
    }
    throw new Error(`no live node knows the master of slot ${slot}`);
  }

  private async script(...args: string[]): Promise<void> {
    const env = {
      ...process.env,
      REDIS_CLUSTER_REPLICAS: '1',
      ...(this.nodeTimeoutMs === undefined
        ? {}
        : { REDIS_CLUSTER_NODE_TIMEOUT_MS: String(this.nodeTimeoutMs) }),
    };
    const out = await run('bash', ['docker/local/redis-cluster.sh', args[0], this.dir, ...args.slice(1)], {
      cwd: root,
      env,
    });
    process.stdout.write(out.stdout);
  }
}

/**
 * What the suites read of a decision. The traffic keeps only this of each one: a failover at load
 * records tens of thousands of decisions, and whole `Decision`s (their windows, limits and headers)
 * would grow the test process's heap into long garbage-collection pauses that stall every decision
 * in flight, on healthy masters too.
 */
export type SentDecision = Pick<
  Decision,
  'kind' | 'degraded' | 'degraded_cause' | 'reason' | 'replayed' | 'decision_id'
>;

/** One decision of the traffic, with when it was asked and answered (ms since the traffic began). */
export interface Sent {
  readonly tenant: string;
  readonly mode: 'open' | 'closed';
  readonly startedAt: number;
  readonly endedAt: number;
  readonly decision: SentDecision;
}

/** Answered allowed from Redis: the decisions that must be in the ledger. */
export const acknowledged = (s: Sent): boolean =>
  s.decision.kind === 'allowed' && !s.decision.degraded && !s.decision.replayed;
/** Not answered from Redis: degraded (fail_open) or refused (fail_closed). */
export const failed = (s: Sent): boolean => s.decision.degraded || s.decision.kind === 'unavailable';

/**
 * `concurrency` loops, each deciding one unit after the other over `tenants`, alternating the
 * fail_open and fail_closed policies (attribute `fm`), until `stop`.
 */
export class Traffic {
  readonly sent: Sent[] = [];
  readonly t0 = performance.now();
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly sut: DecisionService,
    private readonly tenants: readonly string[],
    concurrency: number,
  ) {
    this.loops = Array.from({ length: concurrency }, (_, i) => this.loop(i));
  }

  now(): number {
    return performance.now() - this.t0;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Polls `done` until it holds, failing after `timeoutMs`: a barrier on what the traffic saw. */
  async until(what: string, done: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!done()) {
      if (performance.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async loop(worker: number): Promise<void> {
    for (let n = worker; this.running; n++) {
      const tenant = this.tenants[n % this.tenants.length];
      const mode = (n >> 1) % 2 === 0 ? 'open' : 'closed';
      const startedAt = this.now();
      const decision = await this.sut.decide({
        selectors: { tenant, principal: tenant },
        attributes: { fm: mode },
        cost: 1,
      });
      const { kind, degraded, degraded_cause, reason, replayed, decision_id } = decision;
      this.sent.push({
        tenant,
        mode,
        startedAt,
        endedAt: this.now(),
        decision: { kind, degraded, degraded_cause, reason, replayed, decision_id },
      });
      // A refusal without I/O (breaker open) resolves at once: without a turn of the event loop the
      // loops would spin on microtasks and starve every timer and socket, the breaker's probe included.
      await new Promise((r) => setImmediate(r));
    }
  }
}

/**
 * A policy's state after a fault: the engine reconnects and its breaker closes on its own, and until
 * then the peek is refused (`unavailable`), so it is asked again until `timeoutMs`.
 */
export async function stateAfterFault(
  sut: DecisionService,
  policy: string,
  selectors: Record<string, string>,
  timeoutMs = 20_000,
): Promise<PolicyStateView> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const state = await sut.state(policy, selectors);
    if (state.ok) return state.state;
    if (performance.now() > deadline) throw new Error(`state of ${policy}: ${state.message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every decision id in every shard's outbox stream (allowed entries; no relay runs in these tests). */
export async function outboxIds(cluster: Cluster | Redis, shards: number): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const keys of allShardKeys(shards)) {
    for (const [, fields] of await cluster.xrange(keys.outbox, '-', '+')) {
      const p = fields[fields.indexOf('p') + 1];
      ids.add((JSON.parse(p) as { id: string }).id);
    }
  }
  return ids;
}

/** What a failover cost, from the traffic's records (decisions on the killed master's tenants). */
export interface FailoverCost {
  readonly failedOpen: number;
  readonly failedClosed: number;
  /** From the kill to the end of the last failed decision of each policy, ms (0: none failed). */
  readonly windowOpenMs: number;
  readonly windowClosedMs: number;
  readonly acknowledged: number;
  /** Failed decisions by backend reason (`backend_unavailable` includes an open breaker). */
  readonly causes: Readonly<Record<string, number>>;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export function failoverCost(
  sent: readonly Sent[],
  victims: ReadonlySet<string>,
  killedAt: number,
): FailoverCost {
  const after = sent.filter((s) => victims.has(s.tenant) && s.endedAt >= killedAt);
  // A reduce, not Math.max(...spread): a failover at load fails tens of thousands of decisions, more
  // arguments than a call's stack holds.
  const lastFailure = (mode: Sent['mode']): number =>
    after.reduce(
      (last, s) => (s.mode === mode && failed(s) ? Math.max(last, s.endedAt - killedAt) : last),
      0,
    );
  return {
    failedOpen: after.filter((s) => s.mode === 'open' && failed(s)).length,
    failedClosed: after.filter((s) => s.mode === 'closed' && failed(s)).length,
    windowOpenMs: Math.round(lastFailure('open')),
    windowClosedMs: Math.round(lastFailure('closed')),
    acknowledged: after.filter(acknowledged).length,
    causes: countBy(after.filter(failed), (s) => s.decision.degraded_cause ?? s.decision.reason ?? '?'),
  };
}

/**
 * Decisions of `tenants` (on masters that never failed) that failed, answered in `[from, to)` (ms of
 * the traffic), with their causes: a failure of another node must not reach them.
 */
export function failuresOf(
  sent: readonly Sent[],
  tenants: ReadonlySet<string>,
  from: number,
  to = Infinity,
): { readonly failed: number; readonly overMs: number; readonly causes: Readonly<Record<string, number>> } {
  const hit = sent.filter((s) => tenants.has(s.tenant) && s.endedAt >= from && s.endedAt < to && failed(s));
  return {
    failed: hit.length,
    // From `from` to the end of the last failed one (0: none failed).
    overMs: Math.round(hit.reduce((last, s) => Math.max(last, s.endedAt - from), 0)),
    causes: countBy(hit, (s) => `${s.mode}:${s.decision.degraded_cause ?? s.decision.reason ?? '?'}`),
  };
}

/** The port of the replica following the master on `masterPort` (from its INFO replication). */
export async function replicaOf(masterPort: number): Promise<number> {
  const node = new Redis({ host: '127.0.0.1', port: masterPort, maxRetriesPerRequest: 0 });
  try {
    const info = await node.info('replication');
    const match = /^slave0:.*port=(\d+)/m.exec(info);
    if (!match) throw new Error(`master ${masterPort} has no replica: ${info}`);
    return Number(match[1]);
  } finally {
    node.disconnect();
  }
}

/**
 * A fresh pair of policies over one calendar-month window of `limit`: fail_open for the attribute
 * `fm=open`, fail_closed for `fm=closed` (`Traffic` sends both), so one run measures both modes.
 */
export function failModePolicies(limit: number): { set: PolicySet; names: string[] } {
  const names = [uniqueName('fo'), uniqueName('fc')];
  const windows = [
    {
      name: 'month',
      role: 'sustained' as const,
      algorithm: 'calendar_month' as const,
      limit,
      periodMs: 31 * 86_400_000,
    },
  ];
  const set: PolicySet = {
    version: uniqueName('v'),
    policies: [
      testPolicy(names[0], {
        key: ['tenant'],
        windows,
        match: { fm: ['open'] },
        onBackendFailure: 'fail_open',
      }),
      testPolicy(names[1], {
        key: ['tenant'],
        windows,
        match: { fm: ['closed'] },
        onBackendFailure: 'fail_closed',
      }),
    ],
    loadedAt: 0,
  };
  return { set, names };
}
