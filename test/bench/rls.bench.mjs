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
import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { hotPathRedis, ROOT } from './lib/built.mjs';
import { findGhz, measureGrpc } from './lib/ghz.mjs';
import { startRelay } from './lib/ledger-apps.mjs';
import { measureHttp } from './lib/load.mjs';
import { cpuSnapshot, cpuSpentMs, sidePids } from './lib/proc-cpu.mjs';
import { freePort, waitFor } from './lib/processes.mjs';
import { redisReading, redisSpent } from './lib/redis-cost.mjs';
import { writeJson } from './lib/report.mjs';
import { descriptors, GRPC_DOMAIN, HTTP_DOMAIN, writeConfigs } from './lib/rls-configs.mjs';
import { peerBuildInstructions, startPeer, startPlainRedis } from './lib/rls-peer.mjs';
import { printRlsSummary, summarizeCase } from './lib/rls-report.mjs';
import { expectCounted, rlsCall, startTallyApi, TALLY_AUTH } from './lib/rls-tally.mjs';
import { processMemory } from './lib/rss.mjs';
import { startStack } from './lib/stack.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const log = (line) => process.stdout.write(`[bench rls] ${line}\n`);

const settings = {
  rounds: int('BENCH_ROUNDS', 3),
  durationSeconds: int('BENCH_DURATION', 10),
  warmupSeconds: int('BENCH_WARMUP', 2),
  concurrency: int('BENCH_CONCURRENCY', 50),
  grpcConnections: int('BENCH_GRPC_CONNECTIONS', 10),
  workers: process.env.BENCH_RLS_WORKERS ?? 'auto',
  relay: process.env.BENCH_RLS_RELAY !== '0',
  cases: (process.env.BENCH_RLS_CASES ?? 'grpc-1,grpc-4,http').split(',').filter(Boolean),
  shards: 64,
  partitions: 12,
  cpus: availableParallelism(),
  node: process.version,
};

async function portsFrom(offset, count) {
  const base = Number.parseInt(process.env.BENCH_PORT_BASE ?? '', 10);
  const ports = [];
  for (let i = 0; i < count; i++) ports.push(Number.isInteger(base) ? base + offset + i : await freePort());
  return ports;
}

/** The load of one case against one side, as `seconds` of calls. */
function caseLoad(name, side, ghz) {
  const tenant = 't{{.RequestNumber}}';
  if (name === 'grpc-1' || name === 'grpc-4') {
    const data = { domain: GRPC_DOMAIN, descriptors: descriptors(name === 'grpc-1' ? 1 : 4, tenant) };
    const o = {
      bin: ghz,
      target: side.grpcTarget,
      data,
      metadata: side.metadata,
      concurrency: settings.concurrency,
      connections: settings.grpcConnections,
    };
    return (seconds) => measureGrpc(o, seconds);
  }
  if (name === 'http') {
    let n = 0;
    const requests = [{ setupRequest: (req) => ({ ...req, body: side.httpBody(`t${n++}`) }) }];
    return (seconds) =>
      measureHttp({
        url: side.httpUrl,
        body: side.httpBody('t'),
        headers: side.httpHeaders,
        connections: settings.concurrency,
        pipelining: 1,
        warmupSeconds: 0,
        durationSeconds: seconds,
        requests,
      });
  }
  throw new Error(`unknown case ${name}; one of grpc-1, grpc-4, http`);
}

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
  const ghz = settings.cases.some((c) => c.startsWith('grpc')) ? findGhz(log) : null;
  if (ghz) log(`ghz: ${ghz}`);
  const peerBin = process.env.PEER_RATELIMIT_BIN;
  if (!peerBin) log(peerBuildInstructions());
  const configs = writeConfigs(OUT_DIR);
  log(`limits: ${configs.envoyYaml} (peer) → ${configs.policies} (tally policy import-envoy)`);
  const [peerHttp, peerGrpc, peerDebug, peerRedisPort] = await portsFrom(0, 4);
  const [tallyHttp, tallyGrpc, relayPort] = await portsFrom(10, 3);

  const cleanup = [];
  try {
    const stack = await startStack(log);
    cleanup.push(() => stack.down());
    const api = await startTallyApi(
      {
        stack,
        settings,
        policies: configs.policies,
        ports: { http: tallyHttp, grpc: tallyGrpc },
        outDir: OUT_DIR,
      },
      log,
    );
    cleanup.push(() => api.stop());
    const ledger = [];
    if (settings.relay) {
      const relay = await startRelay(stack, settings, log, relayPort);
      cleanup.push(() => relay.stop());
      ledger.push(relay.pid, Number(readFileSync(join(stack.dir, 'kafka.pid'), 'utf8').trim()));
    } else log('no relay: the outbox is written, not shipped (BENCH_RLS_RELAY=0)');
    const tallyRedis = hotPathRedis(stack.redisUrl);
    cleanup.push(() => tallyRedis.quit().catch(() => tallyRedis.disconnect()));
    await waitFor('Tally Redis client', () => tallyRedis.status === 'ready', 10_000);
    const tally = {
      name: 'tally',
      roots: [api.pid],
      ledger,
      redis: tallyRedis,
      grpcTarget: api.grpcTarget,
      metadata: TALLY_AUTH,
      httpUrl: api.decisionsUrl,
      httpHeaders: TALLY_AUTH,
      httpBody: (tenant) =>
        JSON.stringify({ selectors: { tenant }, attributes: { domain: HTTP_DOMAIN }, cost: 1 }),
      label: (pid) => (pid === api.pid ? 'decision-api primary' : 'decision-api worker'),
    };
    const sides = [tally];

    if (peerBin) {
      const peerRedis = await startPlainRedis('peer redis-server', peerRedisPort, log);
      cleanup.push(() => peerRedis.stop());
      const peer = await startPeer(
        {
          bin: peerBin,
          runtimeRoot: configs.runtimeRoot,
          redisPort: peerRedisPort,
          ports: { http: peerHttp, grpc: peerGrpc, debug: peerDebug },
        },
        log,
      );
      cleanup.push(() => peer.stop());
      const peerClient = hotPathRedis(peerRedis.url);
      cleanup.push(() => peerClient.quit().catch(() => peerClient.disconnect()));
      await waitFor('peer Redis client', () => peerClient.status === 'ready', 10_000);
      sides.push({
        name: 'peer',
        roots: [peer.pid],
        ledger: [],
        redis: peerClient,
        grpcTarget: peer.grpcTarget,
        metadata: undefined,
        httpUrl: peer.jsonUrl,
        httpHeaders: {},
        httpBody: (tenant) =>
          JSON.stringify({
            domain: HTTP_DOMAIN,
            descriptors: [{ entries: [{ key: 'tenant', value: tenant }] }],
          }),
        label: () => 'ratelimit',
      });
    }

    // Both sides must count every descriptor by a rule before any figure is taken.
    for (const side of sides) {
      for (const count of [1, 4]) {
        const request = { domain: GRPC_DOMAIN, descriptors: descriptors(count, 'sanity') };
        expectCounted(side.name, request, await rlsCall(side.grpcTarget, request, side.metadata ?? {}));
      }
      const http = await fetch(side.httpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...side.httpHeaders },
        body: side.httpBody('sanity'),
      });
      const text = await http.text();
      if (http.status !== 200 || !/"allowed":true|"overallCode":"OK"/.test(text))
        throw new Error(
          `sanity check failed: ${side.name} HTTP answered ${http.status}: ${text.slice(0, 600)}`,
        );
    }

    const results = {};
    for (const name of settings.cases) {
      const rounds = [];
      for (let n = 0; n < settings.rounds; n++) {
        const round = {};
        for (const side of sides) {
          log(`${name} round ${n + 1}/${settings.rounds}: ${side.name}`);
          round[side.name] = await measure(side, caseLoad(name, side, ghz));
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
