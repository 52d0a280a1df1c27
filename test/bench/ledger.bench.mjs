// The ledger benchmark (issue 4 item 7, DESIGN §6): printed figures, not a timed test. One run, on a
// PRIVATE Redis + Kafka (docker/local/stack.sh on free ports, stopped at the end), of the built apps:
//   1. relay events/s: N outbox entries made by the engine's decide.lua, drained by the relay,
//      vs the raw kafkajs producer sending the same messages with the relay's settings;
//   2. projector events/s: the 2N events of (1) folded into a fresh namespace, vs a bare kafkajs
//      consumer group reading them and doing nothing;
//   3. outbox depth while the decision API runs at its maximum rate (autocannon, BENCH_CONNECTIONS):
//      sampled every 250 ms; bounded = no sustained growth; then the time to drain;
//   4. decision → projection lag at half that rate: marker decisions of fresh tenants, each looked
//      for in the projection every 10 ms after its response; p50/p99;
//   5. scale-out: two projector members on the same cores rebuild a fresh namespace from the start of
//      both topics (the events of every phase above).
// Rates run from the first progress seen to the end (a process's boot and group join are excluded).
// Settings (env): BENCH_LEDGER_DECISIONS (100000), BENCH_LEDGER_PARTITIONS (12), BENCH_LEDGER_TENANTS
// (1000), BENCH_LEDGER_LOAD_SECONDS (20), BENCH_CONNECTIONS (64), BENCH_WARMUP (3 s), BENCH_DIST (a
// build other than dist/), BENCH_APP_NODE_ARGS (node flags of the relay and projector, e.g.
// --cpu-prof), BENCH_STACK_DIR (keep the stack's state there instead of a temp folder).
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { decideLua, hotPathRedis, loadBuilt, loadEngine, ROOT } from './lib/built.mjs';
import { endOffsets, kafkaOf, rawConsume, rawProduce, relayRequests } from './lib/kafka-raw.mjs';
import { startProjector, startRelay } from './lib/ledger-apps.mjs';
import { lagProbe, projectionSeen, sampleEvery, slope, watchProgress } from './lib/ledger-probes.mjs';
import { LEDGER_TARGETS, printLedgerSummary } from './lib/ledger-report.mjs';
import { latencySummary, measureHttp, round } from './lib/load.mjs';
import { fillOutbox, outboxDepth, readOutbox } from './lib/outbox-fill.mjs';
import { writeJson } from './lib/report.mjs';
import { waitFor } from './lib/processes.mjs';
import { AUTH, singleBody, startApi } from './lib/servers.mjs';
import { startStack } from './lib/stack.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const settings = {
  decisions: int('BENCH_LEDGER_DECISIONS', 100_000),
  partitions: int('BENCH_LEDGER_PARTITIONS', 12),
  tenants: int('BENCH_LEDGER_TENANTS', 1000),
  loadSeconds: int('BENCH_LEDGER_LOAD_SECONDS', 20),
  connections: int('BENCH_CONNECTIONS', 64),
  warmupSeconds: int('BENCH_WARMUP', 3),
  shards: 64,
  // The apps' defaults, mirrored by the baselines.
  relayBatch: 1000,
  relayMaxBatchBytes: 512 * 1024,
  projectorConcurrency: 3,
  maxWaitTimeMs: 1000,
  batchSize: 100,
  cpus: availableParallelism(),
  node: process.version,
};
const TOPICS = { usage: 'tally.usage.v1', decision: 'tally.decision.v2' };
const RAW_TOPICS = { usage: 'bench.raw.usage.v1', decision: 'bench.raw.decision.v1' };
const NAMESPACE = 'live'; // the projector's default namespace, fresh on the private stack
const SCALE_NAMESPACE = 'scale2';
const log = (line) => process.stdout.write(`[ledger] ${line}\n`);

export async function runLedgerBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const engine = loadEngine();
  const projections = loadBuilt('libs/projections/src/index.js');
  const stack = await startStack(log);
  const running = [];
  const redis = hotPathRedis(stack.redisUrl);
  const kafka = kafkaOf(stack.brokers);
  const admin = kafka.admin();
  // Stored offsets and events are summed over the shards of a namespace (one per partition).
  const namespaces = new projections.ProjectionNamespaces(redis);
  const storedSum = async (namespace) =>
    [...(await namespaces.offsets(namespace)).values()].reduce((sum, o) => sum + Number(o), 0);
  const eventsOf = async (namespace) =>
    (await namespaces.list()).find((row) => row.name === namespace)?.events ?? 0;
  try {
    await waitFor('Redis', () => redis.status === 'ready', 10_000);
    await admin.connect();
    const depth = () => outboxDepth(redis, engine, settings.shards);
    const n = settings.decisions;

    // 1. relay
    log(`filling the outbox with ${n} decisions of ${settings.tenants} tenants (decide.lua)`);
    const sha = await redis.script('LOAD', decideLua());
    await fillOutbox(redis, engine, sha, { n, tenants: settings.tenants, shards: settings.shards });
    const requests = relayRequests(await readOutbox(redis, engine, settings.shards), RAW_TOPICS, {
      batchSize: settings.relayBatch,
      maxBatchBytes: settings.relayMaxBatchBytes,
    });
    await admin.createTopics({
      waitForLeaders: true,
      topics: Object.values(RAW_TOPICS).map((topic) => ({ topic, numPartitions: settings.partitions })),
    });
    log(`starting the relay on ${n} outbox entries`);
    running.push(await startRelay(stack, settings, log));
    const relayDrain = await watchProgress(async () => n - (await depth()), n);
    // After the relay, on a warm broker: if anything, the ceiling is flattered, not the relay.
    log('raw kafkajs producer: the same messages, the relay’s settings');
    const rawProducer = await rawProduce(kafka, requests);
    const produced = await endOffsets(admin, Object.values(TOPICS));
    const relay = {
      ...relayDrain,
      events: produced,
      eventsPerSec: Math.round(relayDrain.perSec * (produced / n)),
    };
    log(`relay: ${relay.eventsPerSec} events/s; raw producer ${rawProducer.eventsPerSec} events/s`);

    // 2. projector
    log(`bare kafkajs consumer over the ${produced} events`);
    const rawConsumer = await rawConsume(kafka, Object.values(TOPICS), produced, {
      partitionsConsumedConcurrently: settings.projectorConcurrency,
      maxWaitTimeMs: settings.maxWaitTimeMs,
    });
    log('starting the projector on a fresh namespace');
    const projectorApp = await startProjector(stack, settings, log);
    running.push(projectorApp);
    const projectorDrain = await watchProgress(() => storedSum(NAMESPACE), produced);
    const applied = await eventsOf(NAMESPACE);
    const projector = { ...projectorDrain, applied, eventsPerSec: projectorDrain.perSec };
    log(
      `projector: ${projector.eventsPerSec} events/s (${applied} applied); bare consumer ${rawConsumer.eventsPerSec}`,
    );

    // 3. outbox depth at the API's maximum rate
    const api = await startApi({ url: stack.redisUrl }, settings, OUT_DIR, log);
    running.push(api);
    log(`decision API at its maximum rate (${settings.connections} connections, ${settings.loadSeconds}s)`);
    const sampler = sampleEvery(depth, 250);
    const max = await measureHttp({
      url: api.decisionsUrl,
      body: singleBody(),
      headers: AUTH,
      connections: settings.connections,
      pipelining: 1,
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.loadSeconds,
    });
    const depthSamples = await sampler.stop();
    const drainStart = performance.now();
    await watchProgress(async () => ((await depth()) === 0 ? 1 : 0), 1, { pollMs: 100, timeoutMs: 120_000 });
    const measured = depthSamples.filter(([t]) => t >= settings.warmupSeconds);
    const growth = slope(measured);
    const maxDepth = Math.max(...depthSamples.map(([, d]) => d));
    const outbox = {
      apiOkPerSec: max.okPerSec,
      apiLatencyMs: max.latencyMs,
      maxDepth,
      finalDepth: depthSamples.at(-1)?.[1] ?? 0,
      growthPerSec: round(growth, 1),
      // Bounded: over the measured span the depth grew by less than one relay batch or 2 % of what
      // the API wrote; a relay that falls behind grows it by its deficit every second.
      bounded: growth * settings.loadSeconds < Math.max(settings.relayBatch, 0.02 * max.ok),
      drainSeconds: round((performance.now() - drainStart) / 1000, 2),
      samples: depthSamples,
    };
    log(
      `outbox: max ${maxDepth}, final ${outbox.finalDepth}, slope ${outbox.growthPerSec}/s at ${max.okPerSec} req/s`,
    );

    // 4. decision → projection lag at half the maximum rate
    const rate = Math.max(1, Math.round(max.okPerSec / 2));
    log(`lag at half rate: ${rate} req/s for ${settings.loadSeconds}s, marker decisions every 100 ms`);
    const probe = lagProbe({
      tenantPrefix: `lag-${Date.now()}-`,
      decide: async (tenant) => {
        const response = await fetch(api.decisionsUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...AUTH },
          body: JSON.stringify({ selectors: { tenant, principal: 'svc-42', route: 'evaluate' }, cost: 1 }),
        });
        return response.status === 200 && (await response.json()).allowed === true;
      },
      seen: projectionSeen(redis, namespaces, NAMESPACE),
    });
    const half = await new Promise((resolve, reject) => {
      autocannon(
        {
          url: api.decisionsUrl,
          method: 'POST',
          body: singleBody(),
          headers: { 'content-type': 'application/json', ...AUTH },
          connections: Math.min(settings.connections, 32),
          overallRate: rate,
          duration: settings.loadSeconds,
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
    });
    const probed = await probe.stop();
    const lag = {
      rate,
      achievedPerSec: round(half['2xx'] / half.duration),
      ...latencySummary(probed.lagsMs),
      samples: probed.arrived,
      lost: probed.lost,
      failed: probed.failed,
    };
    log(`lag: p50 ${lag.p50} ms, p99 ${lag.p99} ms over ${lag.samples} markers`);

    // 5. scale-out: two projector members on the same cores, rebuilding a fresh namespace from the
    //    start of both topics (everything the phases above published)
    await projectorApp.stop();
    running.splice(running.indexOf(projectorApp), 1);
    // Registered, then made active: the projectors follow the pointer into the fresh namespace.
    await namespaces.ensureActive(SCALE_NAMESPACE, await namespaces.shards(NAMESPACE));
    await namespaces.switchTo(SCALE_NAMESPACE);
    const total = await endOffsets(admin, Object.values(TOPICS));
    log(`two projector members over the ${total} events of both topics, fresh namespace`);
    for (let i = 0; i < 2; i++) running.push(await startProjector(stack, settings, log));
    const scaledDrain = await watchProgress(() => storedSum(SCALE_NAMESPACE), total);
    const twoMembers = { ...scaledDrain, eventsPerSec: scaledDrain.perSec };
    log(`two projector members: ${twoMembers.eventsPerSec} events/s`);

    const figures = { settings, relay, rawProducer, projector, twoMembers, rawConsumer, outbox, lag };
    const ratios = {
      relayVsRawProducer: round(relay.eventsPerSec / rawProducer.eventsPerSec, 3),
      projectorVsRawConsumer: round(projector.eventsPerSec / rawConsumer.eventsPerSec, 3),
    };
    const met = {
      projectorEventsPerSec: projector.eventsPerSec >= LEDGER_TARGETS.projectorEventsPerSec,
      twoMembersEventsPerSec: twoMembers.eventsPerSec >= LEDGER_TARGETS.projectorEventsPerSec,
      lagP99Ms: lag.p99 < LEDGER_TARGETS.lagP99Ms && lag.lost === 0,
      outboxBounded: outbox.bounded,
    };
    printLedgerSummary(figures, ratios, met);
    const out = join(OUT_DIR, 'ledger.json');
    writeJson(out, { at: new Date().toISOString(), ...figures, ratios, targets: LEDGER_TARGETS, met });
    log(`figures written to ${out}`);
    return { ...figures, ratios, met };
  } finally {
    for (const app of running.reverse()) await app.stop();
    await admin.disconnect().catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
    await stack.down();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runLedgerBench().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(
        `ledger bench: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
      );
      process.exit(1);
    },
  );
}
