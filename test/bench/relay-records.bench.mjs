// Relay CPU and Kafka records per decision, two builds side by side in one run (a printed figure,
// not a timed test). Each round, for each build in alternating order: a fresh relay of that build
// starts on an empty outbox and is frozen (SIGSTOP); N outbox entries are written by the engine's own
// decide.lua (allowed, cost 1, spread over tenants); the relay is thawed and drains them. Measured:
// the relay's utime+stime from /proc over the drain, the records it added to the ledger topics, and
// the bytes of the record values its own builders make of the same entries.
// Env: BENCH_DIST_A, BENCH_DIST_B (the two dist/ trees; default: dist/ for both), REDIS_URL,
// KAFKA_BROKERS (a throwaway stack of your own: the Redis is flushed, and the relays publish to the
// real ledger topics, which a projector reading from the start then has to wade through), BENCH_DECISIONS (40000),
// BENCH_ROUNDS (3), BENCH_SHARDS (64), BENCH_PARTITIONS (12).
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

async function drainOnce(dist, redis, engine, sha, admin) {
  await redis.flushdb();
  const port = await freePort();
  const relay = startProcess('relay', process.execPath, [join(dist, 'apps/relay/src/main.js')], {
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
    const wallMs = Date.now() - t0;
    await waitFor(
      'the records',
      async () => (await highWater(admin)) - records0 >= settings.decisions,
      60_000,
    );
    const records = (await highWater(admin)) - records0;
    return { cpuMs, wallMs, records, threads };
  } finally {
    await relay.stop(20_000);
  }
}

const perDecision = (ms) => ((ms * 1000) / settings.decisions).toFixed(1);
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
        const r = await drainOnce(builds[side], redis, engine, sha, admin);
        results[side].push(r);
        log(
          `round ${round} ${side}: ${((r.cpuMs * 1000) / settings.decisions).toFixed(1)} µs CPU/decision, ` +
            `(main ${perDecision(r.threads.main)} / V8 workers ${perDecision(r.threads.v8)} / other ${perDecision(r.threads.other)}), ` +
            `${(r.records / settings.decisions).toFixed(2)} records/decision, drained in ${r.wallMs} ms`,
        );
      }
    }
    for (const side of ['A', 'B']) {
      const cpu = median(results[side].map((r) => (r.cpuMs * 1000) / settings.decisions));
      const main = median(results[side].map((r) => r.threads.main));
      const v8 = median(results[side].map((r) => r.threads.v8));
      const { bytes, records } = recordBytes(builds[side], sample);
      log(
        `${side} (${builds[side]}): median ${cpu.toFixed(1)} µs relay CPU/decision; ` +
          `${(records / sample.length).toFixed(2)} records and ${Math.round(bytes / sample.length)} value bytes per decision`,
      );
    }
  } finally {
    await admin.disconnect();
    await redis.quit();
  }
}

await main();
