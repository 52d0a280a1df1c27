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
// BENCH_BROKER_VARIANTS (`name=dist[,VAR=value…];…`, default `relay=dist`), BENCH_BROKER_RATE (2000),
// BENCH_BROKER_SECONDS (20), BENCH_BROKER_WINDOWS (1: windows in a row per load phase, the last one counts), BENCH_BROKER_WARMUP (10), BENCH_BROKER_ROUNDS (2), BENCH_BROKER_JAVA (1;
// 0 = no java phase), KAFKA_TOOLS_JAR (default: the one `mvn dependency:get
// -Dartifact=org.apache.kafka:kafka-tools:3.9.1` puts in ~/.m2).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideLua, hotPathRedis, loadBuilt, loadEngine, ROOT } from './lib/built.mjs';
import { decideArgs } from './lib/decide-args.mjs';
import { kafkaOf } from './lib/kafka-raw.mjs';
import { appEnv } from './lib/ledger-apps.mjs';
import { outboxDepth } from './lib/outbox-fill.mjs';
import { freePort, startProcess, waitFor } from './lib/processes.mjs';

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
const variants = (env.BENCH_BROKER_VARIANTS ?? 'relay=dist').split(';').map((spec) => {
  const name = spec.slice(0, spec.indexOf('='));
  const [dist, ...vars] = spec.slice(spec.indexOf('=') + 1).split(',');
  return {
    name,
    main: join(ROOT, dist, 'apps/relay/src/main.js'),
    env: Object.fromEntries(vars.map((v) => v.split('='))),
  };
});
const log = (line) => process.stdout.write(`[broker-requests] ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU ms per thread name of a process (digits dropped: `kafka-request-handler-0` → `…-handler-`). */
function threads(pid) {
  const byName = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let text;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')).replace(/\d+/g, '#');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    byName[name] = (byName[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / hz;
  }
  return byName;
}

/** Exited threads' CPU is kept in the process's own total; the per-name split covers live ones. */
function processCpuMs(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / hz;
}

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
  const t0 = threads(brokerPid);
  const w0 = performance.now();
  await sleep(seconds * 1000);
  const w1 = performance.now();
  const c1 = processCpuMs(brokerPid);
  const t1 = threads(brokerPid);
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
  for (const [name, ms] of Object.entries(t1)) {
    const d = (ms - (t0[name] ?? 0)) / cpuSeconds;
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

/** decide.lua at `rate` per second until stopped (as relay-steady.bench.mjs). */
function steadyLoad(redis, engine, sha, rate) {
  let sent = 0;
  let stopped = false;
  const started = performance.now();
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate) - sent;
      if (due > 0) {
        const pipeline = redis.pipeline();
        for (let i = 0; i < due; i++) {
          const n = sent + i;
          pipeline.evalsha(
            sha,
            ...decideArgs(engine, {
              tenant: `t${n % settings.tenants}`,
              principal: `p${n % 97}`,
              shards: settings.shards,
            }),
          );
        }
        sent += due;
        void pipeline.exec();
      }
      await sleep(5);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

async function relayPhase(ctx, variant) {
  const port = await freePort();
  const stack = { redisUrl: env.REDIS_URL, brokers: env.KAFKA_BROKERS };
  const appSettings = { shards: settings.shards, partitions: settings.partitions };
  const relay = startProcess(`relay-${variant.name}`, process.execPath, [variant.main], {
    ...appEnv(stack, appSettings),
    TALLY_RELAY_PORT: String(port),
    ...variant.env,
  });
  try {
    await waitFor(
      'relay',
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status < 500,
      60_000,
    );
    await waitFor(
      'drained',
      async () => (await outboxDepth(ctx.redis, ctx.engine, settings.shards)) === 0,
      120_000,
    );
    await sleep(3000);
    const idle = await window(`${variant.name}-idle`, 15);
    const stop = steadyLoad(ctx.redis, ctx.engine, ctx.sha, settings.rate);
    await sleep(settings.warmup * 1000);
    // Several windows in a row show how the broker's JIT settles under one client's requests.
    let load;
    for (let w = 0; w < settings.windows; w++) load = await window(variant.name, settings.seconds);
    await stop();
    await waitFor(
      'drained',
      async () => (await outboxDepth(ctx.redis, ctx.engine, settings.shards)) === 0,
      120_000,
    );
    return { idle, load };
  } finally {
    const exit = await relay.stop(20_000);
    if (exit.code !== 0) log(`relay ${variant.name} exited with ${JSON.stringify(exit)}\n${relay.output()}`);
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
  const ledgerLib = loadBuilt('libs/ledger/src/index.js');
  const redis = hotPathRedis(env.REDIS_URL);
  const kafka = kafkaOf(env.KAFKA_BROKERS);
  await waitFor('Redis', () => redis.status === 'ready', 10_000);
  const ledger = ledgerLib.createLedger({
    brokers: env.KAFKA_BROKERS.split(','),
    clientId: 'broker-requests',
    logLevel: 'nothing',
  });
  await ledger.provisioner.ensureTopics(
    ledgerLib.ledgerTopicSpecs({ partitions: settings.partitions, replicationFactor: 1 }),
  );
  const javaTopic = `broker-requests-java-${process.pid}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: javaTopic, numPartitions: 24, replicationFactor: 1 }],
  });
  await admin.disconnect();
  await ledger.close();
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
    const jitMsPerS = load.threadMsPerS['C# CompilerThre'] ?? 0;
    const idleJit = Math.min(...idle.map((w) => w.threadMsPerS['C# CompilerThre'] ?? 0));
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
