// Relay CPU and Kafka records per decision, two builds side by side in one run (a printed figure,
// not a timed test). Each round, for each build in alternating order: a fresh relay of that build
// starts on an empty outbox and is frozen (SIGSTOP); N outbox entries are written by the engine's own
// decide.lua (allowed, cost 1, spread over tenants); the relay is thawed and drains them. Measured:
// the relay's utime+stime from /proc over the drain, the records it added to the ledger topics, and
// the bytes of the record values its own builders make of the same entries.
// Env: BENCH_DIST_A, BENCH_DIST_B (the two dist/ trees; default: dist/ for both), REDIS_URL,
// KAFKA_BROKERS (a throwaway stack of your own: the Redis is flushed, and the relays publish to the
// real ledger topics, which a projector reading from the start then has to wade through), BENCH_DECISIONS (40000),
// BENCH_ROUNDS (3), BENCH_SHARDS (64), BENCH_PARTITIONS (12), BENCH_MAIN_A / BENCH_MAIN_B (the relay
// entry of a side, relative to the checkout; default the build's apps/relay/src/main.js, e.g.
// test/bench/lib/relay-rdkafka-main.mjs for the librdkafka producer, which runs with BENCH_DIST set to
// the side's build), BENCH_BROKER_PID (the broker's pid: its CPU over the drain is printed too).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ROOT, decideLua } from './lib/built.mjs';
import { cpuSnapshot, cpuSpentMs, threadSnapshot, threadSpentMs } from './lib/proc-cpu.mjs';
import { fillOutbox, outboxDepth, readOutbox } from './lib/outbox-fill.mjs';
import { freePort, startProcess, waitFor } from './lib/processes.mjs';

const env = process.env;
const settings = {
  decisions: Number(env.BENCH_DECISIONS ?? 40_000),
  rounds: Number(env.BENCH_ROUNDS ?? 3),
  shards: Number(env.BENCH_SHARDS ?? 64),
  partitions: Number(env.BENCH_PARTITIONS ?? 12),
  tenants: 1000,
};
const builds = { A: env.BENCH_DIST_A ?? join(ROOT, 'dist'), B: env.BENCH_DIST_B ?? join(ROOT, 'dist') };
const mainOf = (side) =>
  env[`BENCH_MAIN_${side}`]
    ? join(ROOT, env[`BENCH_MAIN_${side}`])
    : join(builds[side], 'apps/relay/src/main.js');
const brokerPid = env.BENCH_BROKER_PID ? Number(env.BENCH_BROKER_PID) : undefined;
const LEDGER_TOPICS = ['tally.usage.v1', 'tally.decision.v1', 'tally.decision.v2'];
const log = (line) => process.stdout.write(`[relay-records] ${line}\n`);
const load = (dist, path) => createRequire(import.meta.url)(join(dist, path));

/** Bytes of the record values a build's relay makes of `entries` (its own planOutboxBatch). */
function recordBytes(dist, entries) {
  const { planOutboxBatch } = load(dist, 'libs/outbox/src/outbox-batch.js');
  const plan = planOutboxBatch(entries.map((fields, i) => ({ stream: 's', id: `${i}-0`, fields })));
  let bytes = 0;
  let records = 0;
  for (const { messages } of plan.topicMessages)
    for (const m of messages) {
      bytes += Buffer.byteLength(m.value);
      records++;
    }
  return { bytes, records };
}

async function highWater(admin) {
  const topics = (await admin.listTopics()).filter((t) => LEDGER_TOPICS.includes(t));
  let sum = 0;
  for (const topic of topics) for (const p of await admin.fetchTopicOffsets(topic)) sum += Number(p.high);
  return sum;
}

/** What the relay's RSS holds right after the drain, from its own /metrics (prom-client's), MiB. */
async function memoryOf(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const mib = (name) => {
    // Labelled (`{app="relay"}`) or not: the value is the line's last field.
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line === undefined ? NaN : Math.round(Number(line.slice(line.lastIndexOf(' ') + 1)) / 2 ** 20);
  };
  return `heap ${mib('nodejs_heap_size_used_bytes')} used of ${mib('nodejs_heap_size_total_bytes')}, external ${mib('nodejs_external_memory_bytes')}`;
}

async function drainOnce(side, redis, engine, sha, admin) {
  await redis.flushdb();
  const port = await freePort();
  const relay = startProcess('relay', process.execPath, [mainOf(side)], {
    BENCH_DIST: builds[side],
    REDIS_URL: env.REDIS_URL,
    KAFKA_BROKERS: env.KAFKA_BROKERS,
    TALLY_SHARDS: String(settings.shards),
    TALLY_TOPIC_PARTITIONS: String(settings.partitions),
    TALLY_AUTH: 'none',
    TALLY_TOKEN_SECRET: 'bench-token-secret-0123456789',
    TALLY_LOG_LEVEL: 'warn',
    TALLY_RELAY_PORT: String(port),
  });
  try {
    await waitFor(
      'relay',
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status < 500,
      60_000,
    );
    process.kill(relay.pid, 'SIGSTOP');
    await fillOutbox(redis, engine, sha, {
      n: settings.decisions,
      tenants: settings.tenants,
      shards: settings.shards,
    });
    const records0 = await highWater(admin);
    const before = cpuSnapshot([relay.pid]);
    const brokerBefore = brokerPid ? cpuSnapshot([brokerPid]) : undefined;
    const threadsBefore = threadSnapshot(relay.pid);
    const t0 = Date.now();
    process.kill(relay.pid, 'SIGCONT');
    await waitFor(
      'the drain',
      async () => (await outboxDepth(redis, engine, settings.shards)) === 0,
      600_000,
    );
    const cpuMs = cpuSpentMs(before, cpuSnapshot([relay.pid]));
    const threads = threadSpentMs(threadsBefore, threadSnapshot(relay.pid));
    const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${relay.pid}/status`, 'utf8'))[1]) / 1024;
    const wallMs = Date.now() - t0;
    const memory = await memoryOf(port);
    await waitFor(
      'the records',
      async () => (await highWater(admin)) - records0 >= settings.decisions,
      60_000,
    );
    const records = (await highWater(admin)) - records0;
    // The broker until every record is in: it may still be appending when the outbox is empty.
    const brokerMs = brokerBefore ? cpuSpentMs(brokerBefore, cpuSnapshot([brokerPid])) : undefined;
    return { cpuMs, wallMs, records, brokerMs, threads, rssMiB, memory };
  } finally {
    await relay.stop(20_000);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const engine = load(builds.B, 'libs/engine/src/index.js');
  const { createRedisClient } = load(builds.B, 'libs/redis/src/index.js');
  const redis = createRedisClient({ mode: 'single', url: env.REDIS_URL }, 'command');
  const kafka = new Kafka({ brokers: env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const sha = await redis.script('LOAD', decideLua());
    await fillOutbox(redis, engine, sha, { n: 2000, tenants: settings.tenants, shards: settings.shards });
    const sample = (await readOutbox(redis, engine, settings.shards)).slice(0, 2000);
    const results = { A: [], B: [] };
    for (let round = 1; round <= settings.rounds; round++) {
      for (const side of round % 2 === 1 ? ['A', 'B'] : ['B', 'A']) {
        const r = await drainOnce(side, redis, engine, sha, admin);
        results[side].push(r);
        const us = (ms) => ((ms * 1000) / settings.decisions).toFixed(1);
        const split = Object.entries(r.threads)
          .filter(([, ms]) => ms > 0)
          .sort((a, b) => b[1] - a[1])
          .map(([name, ms]) => `${name} ${us(ms)}`)
          .join(', ');
        log(
          `round ${round} ${side}: ${us(r.cpuMs)} µs CPU/decision (${split})` +
            (r.brokerMs === undefined ? '' : `, broker ${us(r.brokerMs)} µs/decision`) +
            `, ${(r.records / settings.decisions).toFixed(2)} records/decision, drained in ${r.wallMs} ms, RSS ${Math.round(r.rssMiB)} MiB (${r.memory})`,
        );
      }
    }
    for (const side of ['A', 'B']) {
      const cpu = median(results[side].map((r) => (r.cpuMs * 1000) / settings.decisions));
      const broker = brokerPid
        ? `, ${median(results[side].map((r) => (r.brokerMs * 1000) / settings.decisions)).toFixed(1)} µs broker`
        : '';
      const { bytes, records } = recordBytes(builds[side], sample);
      log(
        `${side} (${mainOf(side)}): median ${cpu.toFixed(1)} µs relay CPU/decision${broker}; ` +
          `${(records / sample.length).toFixed(2)} records and ${Math.round(bytes / sample.length)} value bytes per decision`,
      );
    }
  } finally {
    await admin.disconnect();
    await redis.quit();
  }
}

await main();
