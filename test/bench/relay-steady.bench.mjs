// The relay at a steady rate: what the ledger (relay + Kafka broker + the Redis work the relay causes)
// costs per decision, compared between builds or settings in the same run, alternating, on a PRIVATE
// Redis + Kafka (docker/local/stack.sh, stopped at the end). A figure, not a timed test.
//
// Per round and per variant (the order alternates between rounds):
//   1. decide.lua runs at BENCH_RELAY_RATE decisions/s (pipelined EVALSHA from this process, the
//      arguments the decision API would send, 1000 tenants over 64 shards); after BENCH_RELAY_WARMUP s,
//      CPU from /proc of the relay, the broker and redis-server over BENCH_RELAY_SECONDS; then, the
//      outbox drained and 10 s later, the relay's idle CPU over BENCH_RELAY_IDLE seconds (ms per s);
//   2. a baseline without any relay, same rate (this process's scripts in Redis, the broker serving
//      the latency consumer), is subtracted from Redis and the broker: what remains is the ledger's.
// Latency: decision (the event's Redis `time`) → the broker's append time of its record (the topics'
// timestamps are set to LogAppendTime on this private stack).
// The relay's CPU is also printed per thread kind (relayMainUs, relayV8WorkersUs: GC and JIT) and its
// kernel share (relaySysUs: socket I/O and the loopback receive work it pays for).
// Records per produce request: tally_relay_events_published_total / tally_relay_produce_requests_total
// from the relay's /metrics (a build without the second series prints n/a).
//
// Settings (env): BENCH_RELAY_VARIANTS (`name=dist[,VAR=value…];…`, dist relative to the checkout;
// default `new=dist`; `,--flag` entries are node flags of that variant alone, e.g. `,--single-threaded-gc`;
// an `.mjs` path instead of a dist is a relay entry of its own, e.g.
// `rdkafka=test/bench/lib/relay-rdkafka-main.mjs`), BENCH_RELAY_RATE (2000), BENCH_RELAY_SECONDS (20), BENCH_RELAY_WARMUP (8),
// BENCH_RELAY_IDLE (10), BENCH_RELAY_ROUNDS (3), BENCH_RELAY_SHARDS (64), BENCH_STACK_* (ports, see lib/stack.mjs),
// BENCH_APP_NODE_ARGS (node flags of the relay, e.g. --cpu-prof).
// Run: npm run build && node test/bench/relay-steady.bench.mjs
import { readFileSync } from 'node:fs';
import kafkajs from 'kafkajs';
import { join } from 'node:path';
import { decideLua, hotPathRedis, loadEngine } from './lib/built.mjs';
import { kafkaOf } from './lib/kafka-raw.mjs';
import { ensureLedgerTopics, relayVariants, startRelayVariant } from './lib/ledger-apps.mjs';
import { latencySummary, round } from './lib/load.mjs';
import { decideAtRate, outboxDrained } from './lib/outbox-fill.mjs';
import { waitFor } from './lib/processes.mjs';
import { cpuSnapshot, cpuSpentMs, mainThreadSleeps, threadSnapshot, threadSpentMs } from './lib/proc-cpu.mjs';
import { startStack } from './lib/stack.mjs';

const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const settings = {
  rate: int('BENCH_RELAY_RATE', 2000),
  seconds: int('BENCH_RELAY_SECONDS', 20),
  warmup: int('BENCH_RELAY_WARMUP', 8),
  idleSeconds: int('BENCH_RELAY_IDLE', 10),
  rounds: int('BENCH_RELAY_ROUNDS', 3),
  tenants: 1000,
  shards: int('BENCH_RELAY_SHARDS', 64),
  partitions: 12,
};
const variants = relayVariants(process.env.BENCH_RELAY_VARIANTS ?? 'new=dist');
const log = (line) => process.stdout.write(`[relay-steady] ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TOPICS = ['tally.usage.v1', 'tally.decision.v2'];
const { ConfigResourceTypes } = kafkajs;

/** Every event of the ledger topics from now on, its decision → consumer latency (ms). */
async function latencyConsumer(kafka) {
  const consumer = kafka.consumer({ groupId: `relay-steady-${process.pid}`, maxWaitTimeMs: 100 });
  let latencies = [];
  let seen = new Set();
  await consumer.connect();
  await consumer.subscribe({ topics: TOPICS, fromBeginning: false });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        const event = JSON.parse(String(message.value));
        if (seen.has(event.id) || typeof event.time !== 'string') continue;
        seen.add(event.id);
        // The broker's append time (LogAppendTime, see main): this consumer's own lag does not count.
        latencies.push(Number(message.timestamp) - Date.parse(event.time));
      }
    },
  });
  return {
    take() {
      const taken = latencies;
      latencies = [];
      seen = new Set();
      return taken;
    },
    stop: () => consumer.disconnect(),
  };
}

async function metricSum(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function redisPid(redis) {
  return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
}

/** CPU ms of each pid over the window in which `during` runs. */
async function cpuOver(pids, during) {
  const before = pids.map((pid) => cpuSnapshot([pid]));
  const result = await during();
  const after = pids.map((pid) => cpuSnapshot([pid]));
  return { cpu: pids.map((_, i) => cpuSpentMs(before[i], after[i])), result };
}

async function measureLoad(ctx, relayPort, relayPid) {
  const { redis, engine, sha, brokerPid, redisServerPid, consumer } = ctx;
  const load = decideAtRate(redis, engine, sha, settings);
  await sleep(settings.warmup * 1000);
  consumer.take();
  const metricsBefore = relayPort ? await readRelayMetrics(relayPort) : undefined;
  const pids = [brokerPid, redisServerPid, ...(relayPid ? [relayPid] : [])];
  const threadsBefore = relayPid ? threadSnapshot(relayPid) : undefined;
  const sleepsBefore = relayPid ? mainThreadSleeps(relayPid) : null;
  const { cpu, result: decisions } = await cpuOver(pids, async () => {
    const from = load.answered();
    await sleep(settings.seconds * 1000);
    return load.answered() - from;
  });
  // The relay's main thread (its own work) apart from V8's workers (GC helpers, concurrent JIT).
  const relayThreads = relayPid ? threadSpentMs(threadsBefore, threadSnapshot(relayPid)) : undefined;
  const sleepsAfter = relayPid ? mainThreadSleeps(relayPid) : null;
  const metricsAfter = relayPort ? await readRelayMetrics(relayPort) : undefined;
  const latencies = consumer.take();
  await load.stop();
  const requests =
    metricsAfter?.requests === undefined ? undefined : metricsAfter.requests - metricsBefore.requests;
  return {
    decisions,
    brokerMs: cpu[0],
    redisMs: cpu[1],
    relayMs: cpu[2],
    relayThreads,
    recordsPerRequest: requests
      ? round((metricsAfter.published - metricsBefore.published) / requests, 1)
      : null,
    // How often the relay's event loop slept and was woken, per produce request (one batch each).
    sleepsPerRequest:
      requests && sleepsBefore !== null && sleepsAfter !== null
        ? round((sleepsAfter - sleepsBefore) / requests, 1)
        : null,
    latency: latencySummary(latencies),
  };
}

async function readRelayMetrics(port) {
  return {
    published: await metricSum(port, 'tally_relay_events_published_total'),
    requests: await metricSum(port, 'tally_relay_produce_requests_total'),
  };
}

async function runVariant(ctx, variant, stack) {
  const relay = await startRelayVariant(stack, settings, variant, log);
  const drained = () => outboxDrained(ctx.redis, ctx.engine, settings.shards);
  try {
    await drained();
    const figures = await measureLoad(ctx, relay.port, relay.pid);
    await drained();
    // Idle after traffic, once the last batch's garbage is collected (not the boot's tail).
    await sleep(10_000);
    const idle = await cpuOver([relay.pid], () => sleep(settings.idleSeconds * 1000));
    return { ...figures, idleMsPerS: round(idle.cpu[0] / settings.idleSeconds, 2) };
  } finally {
    await relay.stop();
  }
}

async function baseline(ctx) {
  const figures = await measureLoad(ctx);
  // The outbox the baseline filled (no relay read it): deleted, groups with it; a relay recreates them.
  const pipeline = ctx.redis.pipeline();
  for (const keys of ctx.engine.allShardKeys(settings.shards)) pipeline.del(keys.outbox);
  await pipeline.exec();
  return figures;
}

const median = (values) => {
  const sorted = values
    .filter((v) => v !== null && v !== undefined && Number.isFinite(v))
    .sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor((sorted.length - 1) / 2)];
};

async function main() {
  const engine = loadEngine();
  const stack = await startStack(log);
  const redis = hotPathRedis(stack.redisUrl);
  const kafka = kafkaOf(stack.brokers);
  const admin = kafka.admin();
  let consumer;
  try {
    await waitFor('Redis', () => redis.status === 'ready', 10_000);
    await ensureLedgerTopics(stack.brokers, settings.partitions, 'relay-steady');
    // The record timestamp becomes the broker's append time: latency = append − decision (Redis time).
    await admin.connect();
    await admin.alterConfigs({
      validateOnly: false,
      resources: TOPICS.map((name) => ({
        type: ConfigResourceTypes.TOPIC,
        name,
        configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
      })),
    });
    await admin.disconnect();
    consumer = await latencyConsumer(kafka);
    const ctx = {
      redis,
      engine,
      sha: await redis.script('LOAD', decideLua()),
      brokerPid: Number(readFileSync(join(stack.dir, 'kafka.pid'), 'utf8').trim()),
      redisServerPid: await redisPid(redis),
      consumer,
    };
    log(
      `settings ${JSON.stringify(settings)}; variants ${variants.map((v) => `${v.name} ${JSON.stringify(v.env)}`).join(' | ')}`,
    );
    // A cold broker costs about twice as much per record for its first half-minute: warm it first.
    await runVariant(ctx, variants[0], stack).then((f) =>
      log(`warm-up run (${variants[0].name}): ${JSON.stringify(f)}`),
    );
    const rows = Object.fromEntries(variants.map((v) => [v.name, []]));
    for (let r = 0; r < settings.rounds; r++) {
      const base = await baseline(ctx);
      log(`round ${r + 1} baseline: ${JSON.stringify(base)}`);
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const f = await runVariant(ctx, variant, stack);
        const us = (ms) => round((ms * 1000) / f.decisions, 1);
        const row = {
          relayUs: us(f.relayMs),
          relayMainUs: us(f.relayThreads.main),
          relayV8WorkersUs: us(f.relayThreads.v8),
          relaySysUs: us(f.relayThreads.sys),
          brokerUs: us(f.brokerMs - (base.brokerMs * f.decisions) / base.decisions),
          redisUs: us(f.redisMs - (base.redisMs * f.decisions) / base.decisions),
          recordsPerRequest: f.recordsPerRequest,
          sleepsPerRequest: f.sleepsPerRequest,
          p50: f.latency.p50,
          p99: f.latency.p99,
          idleMsPerS: f.idleMsPerS,
          ratePerS: round(f.decisions / settings.seconds),
        };
        row.ledgerUs = round(row.relayUs + row.brokerUs + row.redisUs, 1);
        rows[variant.name].push(row);
        log(`round ${r + 1} ${variant.name}: ${JSON.stringify(row)}`);
      }
    }
    log(
      `median of ${settings.rounds} rounds at ${settings.rate} decisions/s (µs CPU per decision; latency ms):`,
    );
    log(
      'variant | ledger µs | relay | broker | redis | records/request | sleeps/request | p50 ms | p99 ms | idle ms/s',
    );
    for (const [name, list] of Object.entries(rows)) {
      const m = (k) => median(list.map((row) => row[k]));
      log(
        `${name} | ${m('ledgerUs')} | ${m('relayUs')} | ${m('brokerUs')} | ${m('redisUs')} | ${m('recordsPerRequest') ?? 'n/a'} | ${m('sleepsPerRequest') ?? 'n/a'} | ${m('p50')} | ${m('p99')} | ${m('idleMsPerS')}`,
      );
    }
  } finally {
    await consumer?.stop().catch(() => undefined);
    redis.disconnect();
    await stack.down();
  }
}

await main();
process.exit(0);
