/**
 * Redis master failover under traffic, on a real local Redis Cluster of 3 masters + 3 replicas
 * (docker/local/redis-cluster.sh, with the settings it ships), which this file starts, crashes
 * (SIGKILL by recorded pid) and stops itself. Real: the cluster, the engine, decide.lua. No relay:
 * an allowed decision's outbox entry in Redis is what the ledger would publish, so "lost" means an
 * allowed decision answered from Redis whose outbox entry is gone after the failover.
 *
 * Prints what each failover cost (docs/scaling.md quotes these lines): how long and how many
 * decisions on the killed master's tenants failed per fail mode, how many of the other masters'
 * tenants failed, and how many acknowledged decisions were lost. Asserted: with async replication,
 * nothing lost on masters that did not fail; in durable mode (WAIT 1 replica), 0 lost across 3
 * failovers, exactly; in both, 0 failed decisions of tenants on the masters that did not fail (the
 * cluster ships `cluster-require-full-coverage no`, so they keep their slots, and each node has its
 * own breaker). The nodes run with the settings docker/local/redis-cluster.sh ships.
 */
import { mkdtempSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DecisionService,
  EngineService,
  shardOf,
  type EngineHealth,
  type EngineOptions,
} from '@tally/engine';
import { createRedisClient } from '@tally/redis';
import { freeClusterPorts, uniqueName } from '@tally/testing';
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LocalCluster,
  Traffic,
  acknowledged,
  failModePolicies,
  failoverCost,
  failuresOf,
  outboxIds,
  replicaOf,
  stateAfterFault,
  type Sent,
} from './redis-failover.harness';

const SHARDS = 64;
const LIMIT = 1_000_000_000;
const CONCURRENCY = 32;
/** Set up in beforeAll on ports free with their bus ports, so it never meets another suite's cluster. */
let local: LocalCluster;
/** What afterAll stops: unset when beforeAll failed before starting a cluster. */
let started: LocalCluster | undefined;
let connection: { mode: 'cluster'; nodes: { host: string; port: number }[] };

describe('Redis master failover on a 3 + 3 cluster', () => {
  let admin: Cluster;
  const engines: EngineService[] = [];
  /** Every traffic started, stopped in afterAll too: a failed test must not leave its loops running. */
  const traffics: Traffic[] = [];
  const trafficOn = (sut: DecisionService): Traffic => {
    const traffic = new Traffic(sut, [...victims, ...others], CONCURRENCY);
    traffics.push(traffic);
    return traffic;
  };
  /** Tenants whose shard lives on the master that gets killed, and some that live elsewhere. */
  const victims: string[] = [];
  const others: string[] = [];
  let victimSlot = -1;

  const slotOf = async (tenant: string): Promise<number> =>
    (await admin.call('CLUSTER', 'KEYSLOT', `{s${shardOf(tenant, SHARDS)}}`)) as number;

  /** A fresh pair of policies (fail_open on `fm=open`, fail_closed on `fm=closed`) on one engine. */
  async function build(
    over: Partial<EngineOptions> = {},
  ): Promise<{ sut: DecisionService; names: string[]; engine: EngineService }> {
    const { set, names } = failModePolicies(LIMIT);
    // A deadline for a busy machine, not production's: "no failed decision on the healthy masters"
    // is about breakers, and a step that a CPU-starved machine answered late is not a failover's
    // failure (beside two busy cores a healthy master's step once took 446 ms).
    const options: EngineOptions = {
      redis: connection,
      shards: SHARDS,
      backendTimeoutMs: 2_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'failover-secret-0123456789',
      ...over,
    };
    const engine = new EngineService(createRedisClient(connection, 'hot-path'), options);
    await engine.onModuleInit();
    engines.push(engine);
    return { sut: new DecisionService(engine, { current: set }, options), names, engine };
  }

  /** Acknowledged decisions missing from the outbox, and window units short of them. */
  async function losses(
    sut: DecisionService,
    names: string[],
    sent: readonly Sent[],
  ): Promise<{ lostIds: Sent[]; lostUnits: number }> {
    const ids = await outboxIds(admin, SHARDS);
    const acked = sent.filter(acknowledged);
    let lostUnits = 0;
    for (const tenant of [...victims, ...others]) {
      for (const [i, mode] of (['open', 'closed'] as const).entries()) {
        const state = await stateAfterFault(sut, names[i], { tenant, principal: tenant });
        const used = LIMIT - state.windows[0].remaining;
        const answered = acked.filter((s) => s.tenant === tenant && s.mode === mode).length;
        lostUnits += Math.max(0, answered - used);
      }
    }
    return { lostIds: acked.filter((s) => !ids.has(s.decision.decision_id)), lostUnits };
  }

  /** Kills the master of the victims' slots and resolves when a live node names another master. */
  async function killMaster(
    traffic: Traffic,
  ): Promise<{ port: number; killedAt: number; failoverMs: number }> {
    const port = await local.masterOf(victimSlot);
    const killedAt = traffic.now();
    await local.kill(port);
    let promoted = port;
    while (promoted === port) {
      promoted = await local.masterOf(victimSlot, port);
      if (traffic.now() - killedAt > 60_000) throw new Error('no failover within 60 s');
      if (promoted === port) await new Promise((r) => setTimeout(r, 20));
    }
    return { port, killedAt, failoverMs: Math.round(traffic.now() - killedAt) };
  }

  /** The dead master's tenants failed by their policy's fail mode: fail_open degraded, fail_closed 503. */
  function expectFailModes(sent: readonly Sent[]): void {
    const wrong = sent.filter((s) =>
      s.mode === 'open'
        ? s.decision.kind !== 'allowed'
        : s.decision.kind === 'allowed' && s.decision.degraded,
    );
    expect(wrong.map((s) => [s.mode, s.decision.kind, s.decision.reason])).toEqual([]);
  }

  /** The 3 slowest decisions of `tenants` that ended after the kill, as `start→end` ms from the kill. */
  const slowest = (sent: readonly Sent[], tenants: ReadonlySet<string>, killedAt: number): string =>
    sent
      .filter((s) => tenants.has(s.tenant) && s.endedAt >= killedAt)
      .sort((a, b) => b.endedAt - b.startedAt - (a.endedAt - a.startedAt))
      .slice(0, 3)
      .map((s) => `${Math.round(s.startedAt - killedAt)}→${Math.round(s.endedAt - killedAt)}`)
      .join(', ');

  /** The test process's own pauses: its event loop's longest delay and its longest GC. */
  function watchStalls(): { stop(): string } {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    let gcMax = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMax = Math.max(gcMax, entry.duration);
    });
    loop.enable();
    gc.observe({ entryTypes: ['gc'] });
    return {
      stop: () => {
        loop.disable();
        gc.disconnect();
        return `event loop delay max ${Math.round(loop.max / 1e6)} ms, longest GC ${Math.round(gcMax)} ms`;
      },
    };
  }

  const ackedOnVictimsSince = (traffic: Traffic, since: number): number =>
    traffic.sent.filter((s) => acknowledged(s) && s.startedAt > since && victims.includes(s.tenant)).length;

  beforeAll(async () => {
    const ports = await freeClusterPorts(6);
    const cluster = new LocalCluster(mkdtempSync(join(tmpdir(), 'tally-failover-')), ports);
    local = cluster;
    started = cluster;
    connection = { mode: 'cluster', nodes: ports.map((port) => ({ host: '127.0.0.1', port })) };
    await local.up();
    admin = createRedisClient(connection, 'command') as Cluster;
    admin.on('error', () => undefined); // a killed node's reconnects; the reads below fail loudly
    const firstMaster = new Map<number, number>();
    while (victims.length < 8 || others.length < 4) {
      const tenant = uniqueName('t');
      const slot = await slotOf(tenant);
      if (victimSlot < 0) victimSlot = slot;
      const master = firstMaster.get(slot) ?? (await local.masterOf(slot));
      firstMaster.set(slot, master);
      const group = master === (await local.masterOf(victimSlot)) ? victims : others;
      if (group.length < (group === victims ? 8 : 4)) group.push(tenant);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(traffics.map((t) => t.stop()));
    await Promise.all(engines.map((e) => e.onModuleDestroy()));
    await admin?.quit().catch(() => admin.disconnect());
    await started?.down();
  });

  it('async replication: a master killed at load fails over; what it cost and lost is measured', async () => {
    const { sut, names, engine } = await build();
    const stalls = watchStalls();
    // given: traffic on every master, and the victim master has answered a good share of it
    const traffic = trafficOn(sut);
    await traffic.until(
      '200 decisions acknowledged on the victim master',
      () => ackedOnVictimsSince(traffic, 0) >= 200,
    );

    // when: its master dies (SIGKILL) mid-traffic
    const health: EngineHealth[] = [];
    const sampler = setInterval(() => health.push(engine.health()), 20);
    const { port, killedAt, failoverMs } = await killMaster(traffic);
    await traffic.until(
      '100 decisions acknowledged by the promoted replica',
      () => ackedOnVictimsSince(traffic, killedAt) >= 100,
    );
    clearInterval(sampler);
    await traffic.stop();
    // The dead node rejoins as a replica before anything is asserted: the durable tests need it.
    await local.start(port);

    // then: the replica took over; decisions on the other masters lost nothing (their master never
    // failed) and none of them failed: neither refused nor degraded
    const cost = failoverCost(traffic.sent, new Set(victims), killedAt);
    const healthy = failuresOf(traffic.sent, new Set(others), killedAt);
    const { lostIds, lostUnits } = await losses(sut, names, traffic.sent);
    console.log(
      `[failover] async replication: master ${port} killed; cluster failover ${failoverMs} ms; ` +
        `fail_open degraded ${cost.failedOpen} over ${cost.windowOpenMs} ms; ` +
        `fail_closed refused ${cost.failedClosed} over ${cost.windowClosedMs} ms; ` +
        `causes ${JSON.stringify(cost.causes)}; ` +
        `${traffic.sent.filter(acknowledged).length} acknowledged of ${traffic.sent.length} decisions; ` +
        `lost acknowledged: ${lostIds.length} outbox entries, ${lostUnits} window units; ` +
        `healthy masters' tenants failed ${healthy.failed} over ${healthy.overMs} ms ${JSON.stringify(healthy.causes)}; ` +
        `their slowest decisions: ${slowest(traffic.sent, new Set(others), killedAt)}; ` +
        `this process: ${stalls.stop()}`,
    );
    expect(await local.masterOf(victimSlot)).not.toBe(port);
    expect(lostIds.filter((s) => others.includes(s.tenant))).toEqual([]);
    expect(cost.acknowledged).toBeGreaterThanOrEqual(100);
    expect(healthy).toEqual({ failed: 0, overMs: 0, causes: {} });
    // and: health named the dead master's open breaker as degraded, never unavailable (the other
    // masters answered), and once the slot map names the promoted replica it no longer counts
    const dead = `127.0.0.1:${port}`;
    expect(health.some((h) => h.status === 'degraded' && h.nodes[dead] === 'open')).toBe(true);
    expect(health.filter((h) => h.status === 'unavailable')).toEqual([]);
    expect(engine.health()).toMatchObject({ status: 'healthy', breaker: 'closed' });
    expect(Object.keys(engine.health().nodes)).not.toContain(dead);
    expectFailModes(traffic.sent.filter((s) => victims.includes(s.tenant)));
  }, 180_000);

  it('durable mode: an allowed decision no replica acknowledged is a backend_timeout, and stays on the master', async () => {
    // Deadlines for a busy machine, not production's: this test asserts exact outcomes of single
    // decisions, and a degraded answer must mean "no replica", never "slow". Beside two busy cores
    // one SET + WAIT round trip took up to 0.54 s, and the first decision of this fresh engine also
    // connects and loads decide.lua on the promoted master (two more round trips): with 500 ms per
    // step and 100 ms for WAIT, it once came back degraded with the replica in sync. A dead replica
    // still answers WAIT with 0 at its timeout, so the refusals below are unchanged.
    const { sut } = await build({ backendTimeoutMs: 5_000, replicaWait: { replicas: 1, timeoutMs: 1_000 } });
    const tenant = victims[0];
    const ask = (mode: 'open' | 'closed') =>
      sut.decide({ selectors: { tenant, principal: tenant }, attributes: { fm: mode }, cost: 1 });
    expect(await ask('open')).toMatchObject({ kind: 'allowed', degraded: false });

    // given: the victim master's only replica is dead
    const replica = await replicaOf(await local.masterOf(victimSlot));
    await local.kill(replica);

    // when: decisions are allowed by the script but WAIT counts 0 replicas
    const open = await ask('open');
    const closed = await ask('closed');
    const batch = await sut.decideBatch(
      (['open', 'closed'] as const).map((fm) => ({
        selectors: { tenant, principal: tenant },
        attributes: { fm },
        cost: 1,
      })),
    );

    // then: each policy's fail mode applies, as for a timeout: the write is on the master nonetheless
    expect(open).toMatchObject({ kind: 'allowed', degraded: true, degraded_cause: 'backend_timeout' });
    expect(closed).toMatchObject({ kind: 'unavailable', reason: 'backend_timeout' });
    expect(batch.map((d) => [d.kind, d.degraded, d.reason])).toEqual([
      ['allowed', true, null],
      ['unavailable', false, 'backend_timeout'],
    ]);
    const ids = await outboxIds(admin, SHARDS);
    expect([ids.has(open.decision_id), ids.has(closed.decision_id)]).toEqual([true, true]);

    // and: once the replica is back in sync, decisions are acknowledged again
    await local.start(replica);
    expect(await ask('closed')).toMatchObject({ kind: 'allowed', degraded: false });
  }, 180_000);

  it('durable mode: a replay is acknowledged only when a replica holds it, as a fresh decision', async () => {
    const { sut } = await build({ replicaWait: { replicas: 1, timeoutMs: 100 } });
    const tenant = victims[1];
    const key = uniqueName('k');
    const ask = (mode: 'open' | 'closed', idempotency_key: string) =>
      sut.decide({
        selectors: { tenant, principal: tenant },
        attributes: { fm: mode },
        cost: 1,
        idempotency_key,
      });
    const askBatch = (mode: 'open' | 'closed', idempotency_key: string) =>
      sut.decideBatch([
        { selectors: { tenant, principal: tenant }, attributes: { fm: mode }, cost: 1, idempotency_key },
      ]);
    expect(await ask('closed', uniqueName('warm'))).toMatchObject({ kind: 'allowed', degraded: false });

    // given: the victim master's only replica is dead, and a fail_closed decision with key k got a 503
    const replica = await replicaOf(await local.masterOf(victimSlot));
    await local.kill(replica);
    const first = await ask('closed', key);
    expect(first).toMatchObject({ kind: 'unavailable', reason: 'backend_timeout' });
    const openKey = uniqueName('k');
    const firstOpen = await ask('open', openKey);
    expect(firstOpen).toMatchObject({ kind: 'allowed', degraded: true, replayed: false });

    // when: the same requests come again while no replica can acknowledge anything
    const retried = await ask('closed', key);
    const retriedInBatch = (await askBatch('closed', key))[0];
    const retriedOpen = await ask('open', openKey);

    // then: the replay is refused like the fresh decision (fail_closed), or answered degraded with the
    // stored decision (fail_open), never acknowledged as if a replica held it
    expect(retried).toMatchObject({ kind: 'unavailable', reason: 'backend_timeout', replayed: false });
    expect(retriedInBatch).toMatchObject({ kind: 'unavailable', reason: 'backend_timeout' });
    expect(retriedOpen).toMatchObject({
      kind: 'allowed',
      replayed: true,
      degraded: true,
      degraded_cause: 'backend_timeout',
      decision_id: firstOpen.decision_id,
    });

    // and: once the replica is back in sync, the retry is the one charge, replayed and acknowledged
    await local.start(replica);
    const replayed = await ask('closed', key);
    expect(replayed).toMatchObject({ kind: 'allowed', replayed: true, degraded: false });
    expect(replayed.decision_id).toBe(first.decision_id);
  }, 180_000);

  it("a replay is a replicated write, so durable mode's WAIT covers its record whichever connection stored it", async () => {
    // No WAIT here: a WAIT moves the replication stream by itself (the master asks its replicas for
    // their offset through it), so only the replay's own writes can move it.
    const { sut } = await build();
    const tenant = victims[2];
    const request = {
      selectors: { tenant, principal: tenant },
      attributes: { fm: 'closed' },
      cost: 1,
      idempotency_key: uniqueName('k'),
    };
    expect(await sut.decide(request)).toMatchObject({ kind: 'allowed', replayed: false });
    const master = new Redis({ host: '127.0.0.1', port: await local.masterOf(victimSlot) });
    const offset = async () => Number(/master_repl_offset:(\d+)/.exec(await master.info('replication'))?.[1]);
    try {
      // when: the request is replayed (nothing else writes to this master meanwhile)
      const before = await offset();
      expect(await sut.decide(request)).toMatchObject({ kind: 'allowed', replayed: true, degraded: false });

      // then: the master's replication stream moved: the replay wrote (its record's unchanged expiry),
      // so the WAIT after it waited for a replica to hold everything up to the stored record
      expect(await offset()).toBeGreaterThan(before);
    } finally {
      master.disconnect();
    }
  }, 60_000);

  it('durable mode: 3 master failovers at load lose 0 acknowledged decisions', async () => {
    const { sut, names } = await build({ replicaWait: { replicas: 1, timeoutMs: 100 } });
    const traffic = trafficOn(sut);
    let since = 0;
    const healthyFailed: number[] = [];
    for (let round = 1; round <= 3; round++) {
      // given: the victim master (a different node each round) is answering with its replica in sync
      await traffic.until(
        `round ${round}: 100 decisions acknowledged on the victim master`,
        () => ackedOnVictimsSince(traffic, since) >= 100,
      );

      // when: it dies; its replica takes over, alone until the dead node rejoins as its replica
      const { port, killedAt, failoverMs } = await killMaster(traffic);
      await local.start(port);
      const rejoinedAt = traffic.now();
      await traffic.until(
        `round ${round}: 50 decisions acknowledged after the rejoin`,
        () => ackedOnVictimsSince(traffic, rejoinedAt) >= 50,
      );
      const healthy = failuresOf(traffic.sent, new Set(others), killedAt, traffic.now());
      healthyFailed.push(healthy.failed);
      since = traffic.now();

      const cost = failoverCost(
        traffic.sent.filter((s) => s.startedAt < rejoinedAt),
        new Set(victims),
        killedAt,
      );
      console.log(
        `[failover] durable round ${round}: master ${port} killed; cluster failover ${failoverMs} ms; ` +
          `replica back in sync after ${Math.round(rejoinedAt - killedAt)} ms; ` +
          `fail_open degraded ${cost.failedOpen} over ${cost.windowOpenMs} ms; ` +
          `fail_closed refused ${cost.failedClosed} over ${cost.windowClosedMs} ms; ` +
          `causes ${JSON.stringify(cost.causes)}; ` +
          `healthy masters' tenants failed ${healthy.failed} over ${healthy.overMs} ms ${JSON.stringify(healthy.causes)}`,
      );
    }
    await traffic.stop();
    expect(healthyFailed).toEqual([0, 0, 0]);
    expectFailModes(traffic.sent.filter((s) => victims.includes(s.tenant)));

    // then: every decision answered allowed from Redis is in the outbox and in its window counter
    const { lostIds, lostUnits } = await losses(sut, names, traffic.sent);
    console.log(
      `[failover] durable: ${traffic.sent.filter(acknowledged).length} acknowledged of ${traffic.sent.length} ` +
        `decisions over 3 failovers; lost acknowledged: ${lostIds.length} outbox entries, ${lostUnits} window units`,
    );
    expect(lostIds).toEqual([]);
    expect(lostUnits).toBe(0);
  }, 180_000);
});
