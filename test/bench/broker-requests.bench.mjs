// What the Kafka broker spends per record, and on which requests, for Tally's relay against Kafka's own
// Java producer (ProducerPerformance of kafka-tools) sending Tally's records at the same rate, on a
// stack of your own whose broker was started with JMX (see below). A figure, not a timed test.
//
// Phases, CPU of the broker's pid (utime + stime from /proc, per thread name too) and its request
// counters (JMX `RequestsPerSec` per request type and version, `BrokerTopicMetrics`) read before and
// after each window (the JMX reads fall outside the CPU windows, though the broker's JIT compiles
// the JMX server's code paths at its first reads: warm it with a first run, as main does):
//   idle    the broker with no client of this bench connected (also at the end);
//   <name>-idle  a relay variant connected, its outbox empty, no load;
//   <name>  that relay while decide.lua runs at BENCH_BROKER_RATE decisions/s (after a warm-up);
//   java    ProducerPerformance at the same rate, Tally's tally.usage.v1 records as payloads, a topic of
//           24 partitions (the relay's two topics of 12), BENCH_BROKER_JAVA_PROPS (linger.ms=50
//           batch.size=262144 by default).
// The variants and java alternate in order per round. µs per record = (CPU − the idle rate × window)
// ÷ records appended in the window, the idle rate being the lower of the two idle windows.
//
// Env: REDIS_URL, KAFKA_BROKERS, BENCH_BROKER_PID, BENCH_BROKER_JMX (host:port of the broker's JMX:
// start the stack with KAFKA_HEAP_OPTS="-Xms256m -Xmx512m -Dcom.sun.management.jmxremote.port=P
// -Dcom.sun.management.jmxremote.rmi.port=P -Dcom.sun.management.jmxremote.authenticate=false
// -Dcom.sun.management.jmxremote.ssl=false -Djava.rmi.server.hostname=127.0.0.1"),
// BENCH_BROKER_VARIANTS (as relay-steady's BENCH_RELAY_VARIANTS, lib/ledger-apps.mjs; default `relay=dist`), BENCH_BROKER_RATE (2000),
// BENCH_BROKER_SECONDS (20), BENCH_BROKER_WINDOWS (1: windows in a row per load phase, the last one counts), BENCH_BROKER_WARMUP (10), BENCH_BROKER_ROUNDS (2), BENCH_BROKER_JAVA (1;
// 0 = no java phase), KAFKA_TOOLS_JAR (default: the one `mvn dependency:get
// -Dartifact=org.apache.kafka:kafka-tools:3.9.1` puts in ~/.m2).
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideLua, hotPathRedis, loadEngine, ROOT } from './lib/built.mjs';
import { kafkaOf } from './lib/kafka-raw.mjs';
import { ensureLedgerTopics, relayVariants, startRelayVariant } from './lib/ledger-apps.mjs';
import { decideAtRate, outboxDrained } from './lib/outbox-fill.mjs';
import { waitFor } from './lib/processes.mjs';
import { JIT_COMPILER_THREADS, processCpuMs, threadsByTid, threadSpentByName } from './lib/proc-cpu.mjs';

const env = process.env;
const int = (name, fallback) => Number.parseInt(env[name] ?? String(fallback), 10);
const settings = {
  rate: int('BENCH_BROKER_RATE', 2000),
  seconds: int('BENCH_BROKER_SECONDS', 20),
  warmup: int('BENCH_BROKER_WARMUP', 10),
  rounds: int('BENCH_BROKER_ROUNDS', 2),
  windows: int('BENCH_BROKER_WINDOWS', 1),
  java: env.BENCH_BROKER_JAVA !== '0',
  tenants: 1000,
  shards: 64,
  partitions: 12,
};
const brokerPid = Number(env.BENCH_BROKER_PID);
const jmxUrl = `service:jmx:rmi:///jndi/rmi://${env.BENCH_BROKER_JMX ?? '127.0.0.1:7799'}/jmxrmi`;
const libs = join(ROOT, '.local/kafka-dist/libs/*');
const toolsJar =
  env.KAFKA_TOOLS_JAR ??
  join(homedir(), '.m2/repository/org/apache/kafka/kafka-tools/3.9.1/kafka-tools-3.9.1.jar');
const javaProps = (env.BENCH_BROKER_JAVA_PROPS ?? 'linger.ms=50 batch.size=262144')
  .split(' ')
  .filter(Boolean);
const variants = relayVariants(env.BENCH_BROKER_VARIANTS ?? 'relay=dist');
const log = (line) => process.stdout.write(`[broker-requests] ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The broker's request and append counters (cumulative) over JMX, one short-lived JmxTool. */
function jmx() {
  const out = execFileSync(
    'java',
    [
      '-cp',
      `${libs}:${toolsJar}`,
      'org.apache.kafka.tools.JmxTool',
      '--jmx-url',
      jmxUrl,
      '--object-name',
      'kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*,version=*',
      '--object-name',
      'kafka.server:type=BrokerTopicMetrics,name=*',
      '--attributes',
      'Count',
      '--one-time',
      'true',
      '--report-format',
      'properties',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const counts = { at: performance.now() };
  for (const line of out.split('\n')) {
    const request = /request=([^,]+),version=(\d+):Count=(\d+)/.exec(line);
    if (request) counts[`${request[1]} v${request[2]}`] = Number(request[3]);
    const topic = /BrokerTopicMetrics,name=(\w+):Count=(\d+)/.exec(line);
    if (topic) counts[topic[1]] = Number(topic[2]);
  }
  return counts;
}

/** A window: JMX, CPU, sleep, CPU, JMX. Rates per second; broker ms; records in the CPU window. */
async function window(label, seconds) {
  const j0 = jmx();
  const c0 = processCpuMs(brokerPid);
  const t0 = threadsByTid(brokerPid);
  const w0 = performance.now();
  await sleep(seconds * 1000);
  const w1 = performance.now();
  const c1 = processCpuMs(brokerPid);
  const t1 = threadsByTid(brokerPid);
  const j1 = jmx();
  const jmxSeconds = (j1.at - j0.at) / 1000;
  const cpuSeconds = (w1 - w0) / 1000;
  const perSecond = {};
  for (const key of Object.keys(j1)) {
    if (key === 'at') continue;
    const d = j1[key] - (j0[key] ?? 0);
    if (d > 0) perSecond[key] = Math.round((d / jmxSeconds) * 10) / 10;
  }
  const threadMsPerS = {};
  for (const [name, ms] of Object.entries(threadSpentByName(t0, t1))) {
    const d = ms / cpuSeconds;
    if (d > 0) threadMsPerS[name] = Math.round(d * 10) / 10;
  }
  const result = {
    label,
    brokerMsPerS: Math.round(((c1 - c0) / cpuSeconds) * 10) / 10,
    records: (perSecond.MessagesInPerSec ?? 0) * cpuSeconds,
    cpuSeconds,
    brokerMs: c1 - c0,
    perSecond,
    threadMsPerS,
  };
  log(`${label}: ${JSON.stringify(result)}`);
  return result;
}

async function relayPhase(ctx, variant) {
  const stack = { redisUrl: env.REDIS_URL, brokers: env.KAFKA_BROKERS };
  const relay = await startRelayVariant(stack, settings, variant, log);
  const drained = () => outboxDrained(ctx.redis, ctx.engine, settings.shards);
  try {
    await drained();
    await sleep(3000);
    const idle = await window(`${variant.name}-idle`, 15);
    const decisions = decideAtRate(ctx.redis, ctx.engine, ctx.sha, settings);
    await sleep(settings.warmup * 1000);
    // Several windows in a row show how the broker's JIT settles under one client's requests.
    let load;
    for (let w = 0; w < settings.windows; w++) load = await window(variant.name, settings.seconds);
    await decisions.stop();
    await drained();
    return { idle, load };
  } finally {
    await relay.stop();
  }
}

async function payloadFile(kafka) {
  const payloads = [];
  const consumer = kafka.consumer({ groupId: `broker-requests-${process.pid}` });
  await consumer.connect();
  await consumer.subscribe({ topic: 'tally.usage.v1', fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void payloads.push(String(message.value)) });
  await waitFor('payloads', () => payloads.length >= 2000, 60_000);
  await consumer.disconnect();
  const file = join(tmpdir(), `tally-payloads-${process.pid}.txt`);
  writeFileSync(file, payloads.slice(0, 2000).join('\n'));
  return file;
}

async function javaPhase(ctx) {
  const java = spawn(
    'java',
    [
      '-cp',
      `${libs}:${toolsJar}`,
      'org.apache.kafka.tools.ProducerPerformance',
      '--topic',
      ctx.javaTopic,
      '--num-records',
      String(settings.rate * (settings.warmup + settings.seconds + 30)),
      '--throughput',
      String(settings.rate),
      '--payload-file',
      ctx.payloads,
      '--producer-props',
      `bootstrap.servers=${env.KAFKA_BROKERS}`,
      'acks=all',
      'enable.idempotence=true',
      'partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner',
      ...javaProps,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'] },
  );
  try {
    await sleep(settings.warmup * 1000);
    let load;
    for (let w = 0; w < settings.windows; w++) load = await window('java', settings.seconds);
    return load;
  } finally {
    java.kill('SIGTERM');
    await new Promise((r) => java.once('exit', r));
  }
}

async function main() {
  const engine = loadEngine();
  const redis = hotPathRedis(env.REDIS_URL);
  const kafka = kafkaOf(env.KAFKA_BROKERS);
  await waitFor('Redis', () => redis.status === 'ready', 10_000);
  await ensureLedgerTopics(env.KAFKA_BROKERS, settings.partitions, 'broker-requests');
  const javaTopic = `broker-requests-java-${process.pid}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: javaTopic, numPartitions: 24, replicationFactor: 1 }],
  });
  await admin.disconnect();
  const ctx = { redis, engine, sha: await redis.script('LOAD', decideLua()), javaTopic };
  log(
    `settings ${JSON.stringify(settings)}; variants ${JSON.stringify(variants)}; java ${javaProps.join(' ')}`,
  );
  await sleep(5000);
  const idle = [await window('idle', 20)];
  // The first relay run warms the broker (a cold JVM costs twice as much per record) and fills the topic.
  await relayPhase(ctx, variants[0]);
  if (settings.java) ctx.payloads = await payloadFile(kafka);
  const rows = [];
  const phases = [...variants.map((v) => ({ name: v.name, run: () => relayPhase(ctx, v) }))];
  if (settings.java) phases.push({ name: 'java', run: () => javaPhase(ctx).then((load) => ({ load })) });
  for (let r = 0; r < settings.rounds; r++) {
    for (const phase of r % 2 === 0 ? phases : [...phases].reverse()) {
      const { idle: connected, load } = await phase.run();
      rows.push({ round: r + 1, name: phase.name, connected, load });
    }
  }
  await sleep(5000);
  idle.push(await window('idle', 20));
  // The lower idle: a broker started minutes before still compiles (C2) in the first window.
  const idleMsPerS = Math.min(...idle.map((w) => w.brokerMsPerS));
  log(`broker idle, no client: ${idle.map((w) => w.brokerMsPerS).join(' / ')} ms/s`);
  for (const row of rows) {
    const { load } = row;
    const us = ((load.brokerMs - idleMsPerS * load.cpuSeconds) * 1000) / load.records;
    // The JIT (C1/C2 compiler threads) still compiles minutes after start; apart, the steadier figure.
    const jitMsPerS = load.threadMsPerS[JIT_COMPILER_THREADS] ?? 0;
    const idleJit = Math.min(...idle.map((w) => w.threadMsPerS[JIT_COMPILER_THREADS] ?? 0));
    const usNoJit =
      ((load.brokerMsPerS - jitMsPerS - (idleMsPerS - idleJit)) * load.cpuSeconds * 1000) / load.records;
    const ps = load.perSecond;
    const produce = Object.entries(ps)
      .filter(([k]) => k.startsWith('Produce '))
      .reduce((n, [, v]) => n + v, 0);
    log(
      `round ${row.round} ${row.name}: broker ${us.toFixed(1)} µs/record above idle, ${usNoJit.toFixed(1)} without the JIT ` +
        `(${load.brokerMsPerS} ms/s; connected idle ${row.connected?.brokerMsPerS ?? '–'} ms/s); ` +
        `${Math.round(load.records / load.cpuSeconds)} records/s, produce ${produce}/s, ` +
        `partitions/produce ${(ps.TotalProduceRequestsPerSec / produce).toFixed(1)}, ` +
        `records/partition batch ${(ps.MessagesInPerSec / ps.TotalProduceRequestsPerSec).toFixed(1)}, ` +
        `bytes/record ${Math.round(ps.BytesInPerSec / ps.MessagesInPerSec)}`,
    );
  }
  redis.disconnect();
}

await main();
process.exit(0);
