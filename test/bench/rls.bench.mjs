// Envoy RLS side by side (issue 12): Tally's decision API against envoyproxy/ratelimit, each with a
// private Redis of its own, the same limits (the peer's YAML, converted by `tally policy import-envoy`
// into Tally's policy file), the same load generator and the same calls.
//   grpc-1  ShouldRateLimit, 1 descriptor per call          ghz, Envoy's rls.proto
//   grpc-4  ShouldRateLimit, 4 descriptors per call (4 rules of one tenant)
//   http    the peer's POST /json vs Tally's POST /v1/decisions, autocannon
// Every call is of a tenant never seen before (`t<request number>`): many keys, no hot counter.
// Rounds alternate Tally, peer, Tally, peer, … (BENCH_ROUNDS each, a warmup run before each
// measurement). Per measurement: answered calls/s, p50/p99, server CPU µs per call from /proc/<pid>/stat
// of every process of the side (the API's primary and workers; the peer), RSS per process, the side's
// Redis (process CPU and INFO commandstats µs per call; for Tally decide.lua's EVALSHA and XADD µs per
// call) and, for Tally, the ledger it feeds: the relay and the Kafka broker, reported apart.
// Without PEER_RATELIMIT_BIN it measures Tally alone and prints how to build the peer.
// Settings (env): PEER_RATELIMIT_BIN, GHZ_BIN (else PATH, else .local/bin, else `go install` there),
// BENCH_ROUNDS (3), BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_CONCURRENCY (50),
// BENCH_GRPC_CONNECTIONS (10: ghz spreads the concurrency over them, as Envoy's workers each hold one),
// BENCH_RLS_WORKERS (auto), BENCH_RLS_RELAY (1; 0 = outbox written but not shipped: what the ledger's
// shipping costs on these cores), BENCH_RLS_CASES (grpc-1,grpc-4,http), BENCH_PORT_BASE (servers' ports from
// there: peer +0..+3, Tally +10..+12; else free ports), BENCH_STACK_REDIS_PORT / BENCH_STACK_KAFKA_PORT /
// BENCH_STACK_CONTROLLER_PORT (Tally's private stack), BENCH_PROFILE=1 (--cpu-prof of the API).
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib/built.mjs';
import { cpuSnapshot, cpuSpentMs, sidePids } from './lib/proc-cpu.mjs';
import { redisReading, redisSpent } from './lib/redis-cost.mjs';
import { writeJson } from './lib/report.mjs';
import { writeConfigs } from './lib/rls-configs.mjs';
import { peerBuildInstructions } from './lib/rls-peer.mjs';
import { caseLoad, ghzFor, rlsSettings } from './lib/rls-load.mjs';
import { printRlsSummary, summarizeCase } from './lib/rls-report.mjs';
import { checkSides, startPeerSide, startTallySide } from './lib/rls-sides.mjs';
import { processMemory } from './lib/rss.mjs';
import { startStack } from './lib/stack.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const log = (line) => process.stdout.write(`[bench rls] ${line}\n`);

const settings = {
  ...rlsSettings(),
  relay: process.env.BENCH_RLS_RELAY !== '0',
  cases: (process.env.BENCH_RLS_CASES ?? 'grpc-1,grpc-4,http').split(',').filter(Boolean),
};

function memoryOf(pids, labels) {
  return pids.map((pid) => ({ pid, what: labels(pid), ...processMemory(pid) }));
}

/** Warmup, then one measured run with every reading taken just around it. */
async function measure(side, load) {
  if (settings.warmupSeconds > 0) await load(settings.warmupSeconds);
  const pids = sidePids(side.roots);
  const cpuBefore = cpuSnapshot(side.roots);
  const ledgerBefore = cpuSnapshot(side.ledger);
  const redisBefore = await redisReading(side.redis);
  const result = await load(settings.durationSeconds);
  const cpuAfter = cpuSnapshot(side.roots);
  const ledgerAfter = cpuSnapshot(side.ledger);
  const redis = redisSpent(redisBefore, await redisReading(side.redis));
  const calls = result.requests;
  const perCall = (ms) => Math.round(((ms * 1000) / Math.max(1, calls)) * 10) / 10;
  return {
    ...result,
    cores: settings.cpus,
    serverCpuUsPerCall: perCall(cpuSpentMs(cpuBefore, cpuAfter)),
    ledgerCpuUsPerCall: side.ledger.length > 0 ? perCall(cpuSpentMs(ledgerBefore, ledgerAfter)) : null,
    redis: {
      ...redis,
      processCpuUsPerCall: perCall(redis.processCpuMs),
      commandUsPerCall: redis.commandUsec / Math.max(1, calls),
    },
    memory: memoryOf([...new Set([...pids, ...sidePids(side.roots)])], side.label),
  };
}

export async function runRlsBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const ghz = ghzFor(settings.cases, log);
  if (ghz) log(`ghz: ${ghz}`);
  const peerBin = process.env.PEER_RATELIMIT_BIN;
  if (!peerBin) log(peerBuildInstructions());
  const configs = writeConfigs(OUT_DIR);
  log(`limits: ${configs.envoyYaml} (peer) → ${configs.policies} (tally policy import-envoy)`);

  const cleanup = [];
  try {
    const stack = await startStack(log);
    cleanup.push(() => stack.down());
    const sides = [
      await startTallySide(
        { stack, settings, configs, outDir: OUT_DIR, relay: settings.relay },
        log,
        cleanup,
      ),
    ];
    if (peerBin) sides.push(await startPeerSide({ bin: peerBin, configs }, log, cleanup));
    await checkSides(sides);

    const results = {};
    for (const name of settings.cases) {
      const rounds = [];
      for (let n = 0; n < settings.rounds; n++) {
        const round = {};
        for (const side of sides) {
          log(`${name} round ${n + 1}/${settings.rounds}: ${side.name}`);
          round[side.name] = await measure(side, caseLoad(name, side, { ghz, ...settings }));
          const m = round[side.name];
          log(
            `  ${m.okPerSec} ok/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms, ` +
              `server CPU ${m.serverCpuUsPerCall} µs/call, Redis ${m.redis.processCpuUsPerCall} µs/call`,
          );
        }
        rounds.push(round);
      }
      results[name] = summarizeCase(
        rounds,
        sides.map((s) => s.name),
      );
    }
    const record = {
      at: new Date().toISOString(),
      settings,
      loadAvg: loadavg(),
      peer: peerBin ?? null,
      results,
    };
    printRlsSummary(record);
    const out = join(OUT_DIR, 'rls.json');
    writeJson(out, record);
    log(`figures written to ${out}`);
    return record;
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}
