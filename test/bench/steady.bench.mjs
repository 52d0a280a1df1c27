// Steady rate, Tally beside envoyproxy/ratelimit: what one decision costs in CPU on every process
// of each side, at a fixed rate and at saturation, over gRPC (ShouldRateLimit, 1 descriptor) and HTTP.
// Sides as in the RLS bench (lib/rls-sides.mjs): Tally's decision API (primary + workers) on a
// private Redis, its relay shipping to a private Kafka broker; the peer on a redis-server of its own.
// Per case and load, each round measures Tally, Tally with the ledger paused (relay SIGSTOP'd: the
// outbox is written, not shipped, and trimmed before the next measurement, lib/steady-ledger.mjs), the
// baseline build when given, the floor (the peer's work on Tally's stack, floor.server.mjs) beside the
// peer, the contract's floor (the floor's server making the API's atomic step, decide.lua, on Tally's
// Redis, Tally's relay shipping it), then the peer, that order rotated left by one each round (round 2
// starts with the paused variant); figures are medians over the rounds, ratios are taken within
// each round, then their median.
// Per measurement: CPU µs per answered decision of every process from /proc/<pid>/stat (API workers
// summed into it, threads included), p50/p90/p99, and the relay's records per produce request and
// per decision from its /metrics. Then: every process's idle CPU (a window with no load, 10 s after
// the outbox drained), and the decision → projection lag at half the full pipeline's saturation rate
// (API + relay + projector, measured in the lag phase itself; lib/steady-lag.mjs), with the CPU per
// decision of that load, the projector's included, and no lag figure when that load was answered
// below 95 % of the rate asked.
// The broker's CPU is also read per thread: its JIT compiler threads (C1/C2, compiling in bursts of
// tens of ms per second minutes into a run) apart, in ms per second, and the rest of its CPU per
// decision. The ledger's CPU per decision, two ways: Tally's total minus the ledger-paused total
// (everything, the API's spread and the broker's JIT with it), and the ledger's own processes: the
// relay + the broker without its compiler threads + Redis, the last two above the paused measurement
// (with the broker's JIT counted too, printed beside it).
// Without PEER_RATELIMIT_BIN it measures Tally alone and says how to build it.
// Settings (env): PEER_RATELIMIT_BIN, GHZ_BIN, BENCH_ROUNDS (3), BENCH_DURATION (10 s), BENCH_WARMUP
// (2 s), BENCH_CONCURRENCY (50), BENCH_GRPC_CONNECTIONS (10), BENCH_RLS_WORKERS (auto: one per core),
// BENCH_STEADY_RATE (2000 decisions/s), BENCH_STEADY_CASES (grpc-1,http), BENCH_STEADY_LOADS
// (fixed,max), BENCH_STEADY_PAUSED (1; 0 = no ledger-paused variant), BENCH_STEADY_IDLE_SETTLE (10 s
// from the outbox drained to the idle window), BENCH_STEADY_IDLE_SECONDS (10;
// 0 = none), BENCH_STEADY_PREWARM (30 s per case and side before the rounds; 0 = none),
// BENCH_STEADY_LAG (1; 0 = no lag phase), BENCH_STEADY_LAG_SECONDS (30: the marker phase), BENCH_BASELINE_DIST (another build's dist/, its
// package.json beside it: measured in the same rounds, its own API and relay on the same stack),
// BENCH_PORT_BASE (peer +0..+3, Tally +10..+12, baseline +20..+22, floor +30..+32), BENCH_STEADY_FLOOR
// (1: the floor, floor.server.mjs, beside the peer; 0 = none), BENCH_STEADY_CONTRACT (1: the contract's
// floor beside it, ports +33..+34; 0 = none),
// BENCH_STACK_REDIS_PORT / BENCH_STACK_KAFKA_PORT / BENCH_STACK_CONTROLLER_PORT (Tally's stack).
import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from './lib/built.mjs';
import { writeJson } from './lib/report.mjs';
import { caseLoad, ghzFor, rlsSettings } from './lib/rls-load.mjs';
import { peerBuildInstructions } from './lib/rls-peer.mjs';
import {
  checkSides,
  startContractSide,
  startFloorSide,
  startPeerSide,
  startTallySide,
} from './lib/rls-sides.mjs';
import { primeProjector, projectionLag, projectorAtLatest } from './lib/steady-lag.mjs';
import { ledgerControl } from './lib/steady-ledger.mjs';
import { measureIdle, measureSteady, processGroups } from './lib/steady-measure.mjs';
import { printSteadySummary } from './lib/steady-report.mjs';
import { withTallyStack } from './lib/steady-start.mjs';
import { summarizeLoad, VARIANTS } from './lib/steady-summary.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
/** A lag phase whose load was answered below this share of the rate asked measured an overloaded machine. */
const LAG_MIN_ANSWERED = 0.95;
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const list = (name, fallback) => (process.env[name] ?? fallback).split(',').filter(Boolean);
const log = (line) => process.stdout.write(`[bench steady] ${line}\n`);

const settings = {
  ...rlsSettings(),
  rate: int('BENCH_STEADY_RATE', 2000),
  cases: list('BENCH_STEADY_CASES', 'grpc-1,http'),
  loads: list('BENCH_STEADY_LOADS', 'fixed,max'),
  paused: process.env.BENCH_STEADY_PAUSED !== '0',
  idleSeconds: int('BENCH_STEADY_IDLE_SECONDS', 10),
  idleSettleSeconds: int('BENCH_STEADY_IDLE_SETTLE', 10),
  // A cold JVM broker and a cold relay cost about twice as much per record for their first half-minute:
  // every side runs each case at the fixed rate this long, unmeasured, before the first round.
  prewarmSeconds: int('BENCH_STEADY_PREWARM', 30),
  // The floor beside the peer: its work on Tally's stack (floor.server.mjs).
  floor: process.env.BENCH_STEADY_FLOOR !== '0',
  // The contract's floor: the floor's server with decide.lua and the ledger in place of its counters.
  contract: process.env.BENCH_STEADY_FLOOR !== '0' && process.env.BENCH_STEADY_CONTRACT !== '0',
  lag: process.env.BENCH_STEADY_LAG !== '0',
  // Markers every 100 ms: a p99 over 300 of them, not the second largest of 100.
  lagSeconds: int('BENCH_STEADY_LAG_SECONDS', 30),
};

const short = (m) =>
  `${m.okPerSec}/s, p50 ${m.latencyMs.p50} p99 ${m.latencyMs.p99} ms, ${m.totalCpuUs} µs CPU/decision ` +
  `(${Object.entries(m.cpuUs)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')})` +
  (m.broker
    ? `, broker without its compiler threads ${m.broker.withoutCompilerUs} (JIT ${m.broker.compilerMsPerSec} ms/s)`
    : '') +
  `, records/produce ${m.relay.recordsPerRequest ?? 'n/a'}` +
  (m.machine
    ? `; machine ms/s: side ${m.machine.sideMsPerSec}, load generator ${m.machine.generatorMsPerSec}, ` +
      `other ${m.machine.otherMsPerSec}, idle ${m.machine.idleMsPerSec}`
    : '');

/** `list` rotated left by `by`: round n starts with the variant round n − 1 ran second. */
const rotated = (list, by) => [...list.slice(by % list.length), ...list.slice(0, by % list.length)];

/**
 * One round of one case and load: Tally, Tally with the ledger paused, the baseline, the floor, the
 * contract's floor, the peer, in an order that rotates by one each round (`index`), so no side always
 * runs first.
 */
async function measureRound({ name, load, sides, ledger, ghz, index }) {
  const rate = load === 'fixed' ? settings.rate : undefined;
  const run = (side, variant) =>
    measureSteady({
      load: caseLoad(name, side, { ghz, ...settings, rate }),
      groups: processGroups(side, { relay: variant !== 'paused' }),
      relayMetricsUrl: variant === 'paused' ? null : (side.pids.relayMetricsUrl ?? null),
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.durationSeconds,
    });
  const round = {};
  const variants = VARIANTS.filter(
    (v) => sides[v === 'paused' ? 'tally' : v] && (v !== 'paused' || settings.paused),
  );
  const order = rotated(variants, index);
  log(`  order: ${order.join(', ')}`);
  round.order = order;
  for (const variant of order) {
    const side = sides[variant === 'paused' ? 'tally' : variant];
    if ('relay' in side.pids) {
      const trimmed = await ledger.use(side.relayOf ?? side.name);
      if (trimmed > 0) log(`  the paused measurement's ${trimmed} outbox entries trimmed, not shipped`);
    }
    if (variant === 'paused') ledger.pause();
    round[variant] = await run(side, variant);
    log(`  ${variant}: ${short(round[variant])}`);
  }
  return round;
}

/** Each case at the fixed rate on every side, unmeasured: the rounds then compare warm processes. */
async function prewarm({ sides, ledger, ghz }) {
  if (settings.prewarmSeconds <= 0) return;
  for (const name of settings.cases) {
    for (const side of Object.values(sides)) {
      if (!side) continue;
      if ('relay' in side.pids) await ledger.use(side.relayOf ?? side.name);
      log(`prewarm: ${name}, ${side.name} at ${settings.rate}/s for ${settings.prewarmSeconds} s`);
      await caseLoad(name, side, { ghz, ...settings, rate: settings.rate })(settings.prewarmSeconds);
    }
  }
}

/** BENCH_BASELINE_DIST as a build to start (`{ dist, packageJson }`), or undefined. */
function baselineBuild() {
  const dist = process.env.BENCH_BASELINE_DIST;
  if (!dist) return undefined;
  if (!existsSync(join(dist, 'apps/decision-api/src/main.js')))
    throw new Error(`BENCH_BASELINE_DIST=${dist}: no apps/decision-api/src/main.js in it`);
  return { dist, packageJson: join(dirname(dist), 'package.json') };
}

/**
 * CPU ms per second of Tally's processes with no load: this build's relay running, the outbox drained
 * (the last round may have left a paused round's backlog), then `idleSettleSeconds` for what a drain
 * leaves behind (its collections, Redis expiring the load's keys) before the window.
 */
async function idlePhase(tally, ledger) {
  await ledger.use('tally');
  await sleep(settings.idleSettleSeconds * 1000);
  log(
    `idle: ${settings.idleSeconds} s with no load, ${settings.idleSettleSeconds} s after the outbox drained`,
  );
  return {
    seconds: settings.idleSeconds,
    settleSeconds: settings.idleSettleSeconds,
    cpuMsPerSec: await measureIdle(processGroups(tally), settings.idleSeconds),
  };
}

/**
 * Decision → projection lag at half the full pipeline's maximum rate: Tally's saturation (HTTP's when
 * measured) with the projector running beside the API and the relay, measured here in the same
 * run, not the rounds' saturation (measured without a projector, a rate the whole pipeline cannot
 * reach on these cores). A lag whose background load was not answered at ≥ 95 % of the rate asked
 * is the lag of an overloaded machine: reported as such, with no figure.
 */
async function lagPhase({ results, stack, tally, ledger, ghz }) {
  const transport = results.http ? 'http' : Object.keys(results)[0];
  if (!transport) {
    log('lag: no case measured (BENCH_STEADY_CASES), so no lag phase');
    return null;
  }
  await ledger.use('tally');
  const groupsWith = (projector) => processGroups(tally, { projector: projector.pid });
  // The full pipeline at saturation; then a fresh projector at the newest offsets, so the lag
  // measurement does not fold the saturation's backlog.
  let projector = await projectorAtLatest(stack, settings, log);
  let max;
  try {
    log(`lag: ${transport} at saturation with the projector running, ${settings.durationSeconds} s`);
    max = await measureSteady({
      load: caseLoad(transport, tally, { ghz, ...settings, rate: undefined }),
      groups: groupsWith(projector),
      relayMetricsUrl: tally.pids.relayMetricsUrl,
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.durationSeconds,
    });
    log(`  full pipeline at saturation: ${short(max)}`);
  } finally {
    await projector.stop();
  }
  const rate = Math.max(1, Math.round(max.okPerSec / 2));
  await ledger.use('tally');
  projector = await projectorAtLatest(stack, settings, log);
  try {
    log(`lag: markers every 100 ms beside ${transport} at ${rate}/s for ${settings.lagSeconds} s`);
    const load = caseLoad(transport, tally, { ghz, ...settings, rate });
    await load(settings.warmupSeconds);
    // The background load measured like the rounds', the projector's CPU included.
    const during = () =>
      measureSteady({
        load,
        groups: groupsWith(projector),
        relayMetricsUrl: tally.pids.relayMetricsUrl,
        warmupSeconds: 0,
        durationSeconds: settings.lagSeconds,
      });
    const lag = await projectionLag({ side: tally, redis: tally.redis, during });
    const answered = lag.background.okPerSec / rate;
    const overloaded = answered < LAG_MIN_ANSWERED;
    log(
      `  lag: ${rate}/s asked, ${lag.background.okPerSec}/s answered` +
        (overloaded
          ? ` (${Math.round(answered * 100)} % < ${LAG_MIN_ANSWERED * 100} %): overloaded, no lag figure`
          : `; p50 ${lag.p50} p90 ${lag.p90} p99 ${lag.p99} ms`),
    );
    return { rate, transport, maxRate: max.okPerSec, max, overloaded, ...lag };
  } finally {
    await projector.stop();
  }
}

export async function runSteadyBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  let ghz = null;
  try {
    ghz = ghzFor(settings.cases, log);
  } catch (error) {
    // Part of the default run: without ghz the HTTP case still measures, and says what it skipped.
    log(`no gRPC case: ${error.message}`);
    settings.cases = settings.cases.filter((c) => !c.startsWith('grpc'));
  }
  if (ghz) log(`ghz: ${ghz}`);
  const peerBin = process.env.PEER_RATELIMIT_BIN;
  if (!peerBin) log(peerBuildInstructions('steady'));
  return withTallyStack({ settings, outDir: OUT_DIR, log }, async ({ stack, tally, configs, cleanup }) => {
    const build = baselineBuild();
    const baseline = build
      ? await startTallySide({ stack, settings, configs, outDir: OUT_DIR, relay: true, build }, log, cleanup)
      : undefined;
    const peer = peerBin ? await startPeerSide({ bin: peerBin, configs }, log, cleanup) : undefined;
    const floor = peer && settings.floor ? await startFloorSide({ settings }, log, cleanup) : undefined;
    const contract =
      peer && settings.contract
        ? await startContractSide({ settings, configs, tally }, log, cleanup)
        : undefined;
    const sides = { tally, baseline, floor, contract, peer };
    const relays = { tally: tally.pids.relay, ...(baseline ? { baseline: baseline.pids.relay } : {}) };
    const ledger = ledgerControl(relays, tally.redis, settings.shards);
    cleanup.push(() => ledger.resumeAll());
    await checkSides(Object.values(sides).filter(Boolean));
    // The projector's group and namespace exist before any load, so the lag phase can skip the
    // rounds' backlog instead of folding it.
    if (settings.lag) await primeProjector(stack, settings, tally.redis, log);

    await prewarm({ sides, ledger, ghz });
    const results = {};
    for (const name of settings.cases) {
      results[name] = {};
      for (const load of settings.loads) {
        const rounds = [];
        for (let n = 0; n < settings.rounds; n++) {
          log(
            `${name}, ${load === 'fixed' ? `${settings.rate}/s` : 'saturation'}, round ${n + 1}/${settings.rounds}`,
          );
          rounds.push(await measureRound({ name, load, sides, ledger, ghz, index: n }));
        }
        results[name][load] = { ...summarizeLoad(rounds), rounds };
      }
    }

    const idle = settings.idleSeconds > 0 ? await idlePhase(tally, ledger) : null;
    const lag = settings.lag ? await lagPhase({ results, stack, tally, ledger, ghz }) : null;

    const record = {
      at: new Date().toISOString(),
      settings,
      loadAvg: loadavg(),
      peer: peerBin ?? null,
      baseline: build?.dist ?? null,
      results,
      idle,
      lag,
    };
    printSteadySummary(record);
    const out = join(OUT_DIR, 'steady.json');
    writeJson(out, record);
    log(`figures written to ${out}`);
    return record;
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSteadyBench().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(
        `steady bench: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
      );
      process.exit(1);
    },
  );
}
