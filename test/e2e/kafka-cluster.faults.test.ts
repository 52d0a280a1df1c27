/**
 * The ledger invariant on three brokers (issue 11; docs/scaling.md "Kafka: three brokers"): the
 * built decision-api, two relays and two projectors as child processes on a PRIVATE cluster of three
 * KRaft nodes (replication 3, min.insync.replicas 2, from TALLY_TOPIC_REPLICATION=auto) and a private
 * Redis, with traffic running while a broker is SIGKILLed. After draining, in every scenario:
 *   allowed decisions with cost > 0 (distinct ids, client side)
 *     == distinct ids of `tally.usage.v1` events (duplicates only as identical re-publications)
 *   and their costs per tenant == the projector's usage total per tenant, exactly.
 * Each scenario prints what the fault cost: decisions answered while the leaders moved, the relay
 * backlog's peak (outbox entries not yet in Kafka), how long until the partitions had leaders again,
 * until the relays were back to their pre-fault backlog, and until the restarted broker was back in
 * every in-sync replica set.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { allShardKeys } from '@tally/engine';
import { createLedger, TOPICS, type Ledger } from '@tally/ledger';
import { RELAY_GROUP } from '@tally/outbox';
import { PROJECTOR_GROUP } from '@tally/projections';
import { buildTree, eventually, sleep, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateKafkaCluster, type PartitionState } from './support/kafka-cluster.harness';
import { AppProcess, CALLER_TOKEN, type AppEnv } from './support/ledger-apps.harness';
import { DrainProbe } from './support/ledger-drain.probe';
import { runLedgerScenario } from './support/ledger-scenario';
import { LEDGER_POLICIES, Workload } from './support/ledger-workload.generator';

const SHARDS = 8;
const MIN_DECISIONS = 3000;
const RATE = 400;
const LEDGER_TOPICS = [TOPICS.usage, TOPICS.decision, TOPICS.deadLetter];
const run = uniqueName('kafka3');
const out = resolve(__dirname, '../../.local', run);

let cluster: PrivateKafkaCluster;
let env: AppEnv;
let redis: Redis;
let ledger: Ledger;
let probe: DrainProbe;
let api: AppProcess;
let relays: AppProcess[] = [];
let projectors: AppProcess[] = [];
const started: AppProcess[] = [];
const summary: Record<string, unknown>[] = [];

async function start(kind: AppProcess['kind']): Promise<AppProcess> {
  const app = await AppProcess.start(kind, env);
  started.push(app);
  return app;
}

/** The node that leads the most partitions of the ledger topics (the lowest id on a tie). */
async function busiestLeader(): Promise<{ node: number; leads: number }> {
  const counts = new Map<number, number>();
  for (const p of await cluster.partitions(LEDGER_TOPICS))
    counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
  const [node, leads] = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0] ?? [-1, 0];
  return { node, leads };
}

/** Polls the metadata until `done` holds; kafkajs errors while a node dies count as "not yet". */
async function untilPartitions(done: (all: PartitionState[]) => boolean, what: string): Promise<void> {
  await eventually(
    () => cluster.partitions(LEDGER_TOPICS).catch(() => []),
    (all) => all.length === LEDGER_TOPICS.length * 6 && done(all),
    { timeoutMs: 90_000, intervalMs: 50, what },
  );
}

/**
 * Samples the relay backlog (entries in the outbox streams: written by decisions, not yet confirmed
 * by Kafka) until stopped. A measurement only: no assertion concludes anything from its pace.
 */
class BacklogSampler {
  peak = 0;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor() {
    this.loop = this.sample();
  }

  async stop(): Promise<number> {
    this.stopped = true;
    await this.loop;
    return this.peak;
  }

  private async sample(): Promise<void> {
    while (!this.stopped) {
      this.peak = Math.max(this.peak, await probe.outboxLength());
      await sleep(50);
    }
  }
}

/**
 * What the relays log when kafkajs resolved a batch with partitions left unwritten (a leader moved
 * during its retries) and the producer refused it (libs/ledger partition-receipts.ts).
 */
const UNWRITTEN = 'acknowledged the batch without partitions';
const allRelays: AppProcess[] = [];
const relayLogs = (): string => allRelays.map((r) => r.logs.join('')).join('');

/**
 * Entries delivered to each relay process and not yet acknowledged, by pid, over every outbox
 * stream (a relay's consumer name is `<host>-<pid>-<random>`).
 */
async function pendingByRelayPid(): Promise<Map<number, number>> {
  const byPid = new Map<number, number>();
  for (const { outbox } of allShardKeys(SHARDS)) {
    const summary = (await redis.xpending(outbox, RELAY_GROUP).catch(() => [0])) as [
      number,
      unknown?,
      unknown?,
      [string, string][]?,
    ];
    for (const [name, count] of summary[3] ?? []) {
      const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
      byPid.set(pid, (byPid.get(pid) ?? 0) + Number(count));
    }
  }
  return byPid;
}

/**
 * SIGKILLs the busiest broker with traffic running, runs `during` while it is down, brings it back,
 * and measures each step from the kill.
 */
async function brokerLoss(
  load: Workload,
  during: () => Promise<Record<string, number>>,
): Promise<Record<string, number>> {
  await load.reached(1000);
  // The relays first catch up with the traffic; the backlog they then carry at this rate is the
  // steady one, and "recovered" means back under it.
  await eventually(
    () => probe.outboxLength(),
    (length) => length <= 200,
    { timeoutMs: 60_000, intervalMs: 50, what: 'the relays to catch up before the fault' },
  );
  let steady = 0;
  for (let i = 0; i < 20; i++) {
    steady = Math.max(steady, await probe.outboxLength());
    await sleep(50);
  }
  const victim = await busiestLeader();
  const unwrittenBefore = relayLogs().split(UNWRITTEN).length - 1;
  const sampler = new BacklogSampler();
  const decisionsAtKill = load.decisions;
  const killedAt = performance.now();
  const since = () => Math.round(performance.now() - killedAt);
  await cluster.kill(victim.node);
  const extra = await during();

  await untilPartitions(
    (all) => all.every((p) => p.leader >= 0 && p.leader !== victim.node),
    `leaders away from node ${victim.node}`,
  );
  const leadersMovedMs = since();
  const decisionsWhileLeaderless = load.decisions - decisionsAtKill;
  await eventually(
    () => probe.outboxLength(),
    (length) => length <= Math.max(steady, 100),
    { timeoutMs: 90_000, intervalMs: 50, what: 'the relay backlog to return to its steady size' },
  );
  const relaysRecoveredMs = since();
  // Traffic keeps flowing on two brokers (acks=all is met by the two in-sync replicas left).
  await load.reached(load.decisions + 500);

  const restartAt = performance.now();
  await cluster.startMissing();
  const restartMs = Math.round(performance.now() - restartAt);
  await untilPartitions(
    (all) => all.every((p) => p.isr.length === 3),
    `node ${victim.node} back in every in-sync replica set`,
  );
  const isrFullMs = since();
  await load.reached(load.decisions + 500);
  return {
    killedNode: victim.node,
    partitionsLed: victim.leads,
    steadyBacklog: steady,
    decisionsWhileLeaderless,
    leadersMovedMs,
    relayBacklogPeak: await sampler.stop(),
    relaysRecoveredMs,
    brokerRestartMs: restartMs,
    isrFullMs,
    refusedUnwrittenBatches: relayLogs().split(UNWRITTEN).length - 1 - unwrittenBefore,
    ...extra,
  };
}

/** The shared scenario (support/ledger-scenario.ts). */
async function scenario(
  name: string,
  seed: number,
  fault: (load: Workload) => Promise<Record<string, number>>,
): Promise<Record<string, unknown>> {
  const { line } = await runLedgerScenario(
    {
      run,
      label: 'kafka-cluster',
      api: () => api,
      projector: () => projectors[0],
      probe: () => probe,
      ledger: () => ledger,
      token: CALLER_TOKEN,
      rate: RATE,
      minDecisions: MIN_DECISIONS,
      summary,
    },
    name,
    seed,
    fault,
  );
  return line;
}

beforeAll(async () => {
  await mkdir(out, { recursive: true });
  [cluster] = await Promise.all([
    PrivateKafkaCluster.up(),
    buildTree(out, ['decision-api', 'relay', 'projector']),
  ]);
  const policiesPath = join(cluster.dir, 'policies.yaml');
  await writeFile(policiesPath, LEDGER_POLICIES);
  env = { out, redisUrl: cluster.redisUrl, brokers: cluster.brokers, policiesPath };
  redis = new Redis(cluster.redisUrl);
  ledger = createLedger({ brokers: [...cluster.brokers], clientId: run, logLevel: 'nothing' });
  probe = new DrainProbe(redis, ledger.admin, SHARDS);
  api = await start('decision-api');
  // The first relay creates the topics; the others then find them.
  relays = [await start('relay'), await start('relay')];
  allRelays.push(...relays);
  projectors = [await start('projector'), await start('projector')];
}, 240_000);

afterAll(async () => {
  console.log(`[kafka-cluster] summary\n${summary.map((l) => JSON.stringify(l)).join('\n')}`);
  await Promise.all(started.map((app) => app.kill('SIGKILL')));
  await ledger?.close().catch(() => undefined);
  redis?.disconnect();
  await cluster?.down();
  await rm(out, { recursive: true, force: true });
}, 120_000);

describe('ledger invariant on three Kafka brokers (built apps, private cluster)', () => {
  it('creates the ledger topics with replication 3 and min.insync.replicas 2 (TALLY_TOPIC_REPLICATION=auto)', async () => {
    const partitions = await cluster.partitions(LEDGER_TOPICS);

    expect(partitions).toHaveLength(LEDGER_TOPICS.length * 6);
    expect(partitions.every((p) => p.isr.length === 3)).toBe(true);
    for (const topic of LEDGER_TOPICS) {
      expect(await cluster.topicConfig(topic, 'min.insync.replicas'), topic).toBe('2');
    }
  });

  it('holds when the broker leading the most partitions is SIGKILLed and brought back', async () => {
    const line = await scenario('broker-kill', 11, (load) => brokerLoss(load, () => Promise.resolve({})));
    expect(line.decisionsWhileLeaderless).toBeGreaterThan(0);
  }, 180_000);

  it('holds when a relay and a projector member are SIGKILLed during the broker failure', async () => {
    const line = await scenario('broker-relay-projector-kill', 12, (load) =>
      brokerLoss(load, async () => {
        // The relays' batches wait on the dead leader: the victim dies holding unacknowledged entries.
        // Frozen first, to look: the relay killed is one that holds entries of its own (the count over
        // both relays may be the survivor's alone, which would leave nothing to re-claim).
        let pendingAtKill = 0;
        let relay: AppProcess | undefined;
        await eventually(
          async () => {
            const pending = await pendingByRelayPid();
            for (const candidate of relays) {
              const pid = candidate.child.pid ?? -1;
              if ((pending.get(pid) ?? 0) === 0) continue;
              candidate.child.kill('SIGSTOP');
              pendingAtKill = (await pendingByRelayPid()).get(pid) ?? 0;
              if (pendingAtKill > 0) return (relay = candidate);
              candidate.child.kill('SIGCONT');
            }
            return undefined;
          },
          (found) => found !== undefined,
          { timeoutMs: 20_000, intervalMs: 5, what: 'a relay holding entries in flight' },
        );
        relays = relays.filter((r) => r !== relay);
        const projector = projectors.pop();
        expect(await relay?.kill('SIGKILL')).toBeNull();
        expect(await projector?.kill('SIGKILL')).toBeNull();
        return { pendingAtKill };
      }),
    );
    // The survivor re-claimed what the dead relay held (after TALLY_RELAY_CLAIM_IDLE) and the
    // projector group shrank to the survivor.
    expect(line.pendingAtKill).toBeGreaterThan(0);
    expect(await relays[0]?.metric('tally_relay_reclaimed_total')).toBeGreaterThan(0);
    const group = await ledger.admin.describeGroup(PROJECTOR_GROUP);
    expect(group.members).toHaveLength(1);
  }, 180_000);
});
