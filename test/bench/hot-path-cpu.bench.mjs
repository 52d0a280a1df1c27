// CPU per decision of the decision API at a fixed rate, this build against another (before/after a
// change of the hot path), gRPC and HTTP, in alternating rounds of one run: printed figures, not a
// timed test. Each build runs as production does (its package.json's start flags, TALLY_WORKERS) on
// a private redis-server of its own, so the Redis side of each build is measured apart too. A
// decision is one ShouldRateLimit call with one descriptor (ghz --rps) or one POST /v1/decisions
// (autocannon overallRate), each with a new key. CPU = utime + stime from /proc of the API's primary
// and workers (GC threads included), and of its redis-server, over the measured window, divided by
// the decisions answered in it. With BENCH_STRACE=1 a last pass per build and path attaches
// `strace -c -f -e trace=write,writev` to the workers and prints socket writes per decision (strace
// slows what it traces: that pass is never used for CPU figures).
// Settings (env): BENCH_BASELINE_DIST (required: the other build's dist/, its package.json beside it),
// BENCH_RATE (2000 decisions/s), BENCH_DURATION (10 s per measurement), BENCH_ROUNDS (3),
// BENCH_WORKERS (2), BENCH_REDIS_PORT (6472: this build's Redis; the baseline's is the next port),
// BENCH_PATHS (grpc,http), BENCH_STRACE (0).
// Run: npm run build && BENCH_BASELINE_DIST=/path/to/old/dist node test/bench/hot-path-cpu.bench.mjs
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { ROOT } from './lib/built.mjs';
import { findGhz, measureGrpc, oneDescriptorNewKey } from './lib/ghz.mjs';
import { killAllStarted, startProcess, waitFor } from './lib/processes.mjs';
import { cpuSnapshot, cpuSpentMs, childrenOf } from './lib/proc-cpu.mjs';
import { AUTH, startApi } from './lib/servers.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const settings = {
  rate: int('BENCH_RATE', 2000),
  durationSeconds: int('BENCH_DURATION', 10),
  rounds: int('BENCH_ROUNDS', 3),
  workers: int('BENCH_WORKERS', 2),
  redisPort: int('BENCH_REDIS_PORT', 6472),
  paths: (process.env.BENCH_PATHS ?? 'grpc,http').split(','),
  strace: process.env.BENCH_STRACE === '1',
  shards: 64,
  batchSize: 10,
};
const log = (line) => process.stdout.write(`[bench] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round1 = (x) => Math.round(x * 10) / 10;

async function startRedis(port) {
  const server = startProcess(`redis-server :${port}`, 'redis-server', [
    ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  ]);
  await waitFor('redis-server', () => server.alive() && /Ready to accept/.test(server.output()), 10_000);
  return { url: `redis://127.0.0.1:${port}`, pid: server.pid, stop: () => server.stop() };
}

/** ShouldRateLimit with one descriptor of the bench policy, a new principal (a new key) per call. */
const GRPC_DATA = oneDescriptorNewKey('bench', 'cpu');

let sequence = 0;
function http(api, seconds) {
  const body = () =>
    JSON.stringify({
      selectors: { tenant: 'bench', principal: `cpu-${sequence++}`, route: 'evaluate' },
      cost: 1,
    });
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: api.decisionsUrl,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        requests: [{ setupRequest: (request) => ({ ...request, body: body() }) }],
        connections: 20,
        overallRate: settings.rate,
        duration: seconds,
      },
      (error, r) => (error ? reject(error) : resolve({ answered: r['2xx'], failed: r.non2xx + r.errors })),
    ),
  );
}

function grpc(ghz, api, seconds) {
  const o = { bin: ghz, target: api.grpcTarget, data: GRPC_DATA, metadata: AUTH };
  return measureGrpc({ ...o, concurrency: 20, connections: 10, rps: settings.rate }, seconds).then((r) => ({
    answered: r.ok,
    failed: r.requests - r.ok,
  }));
}

/** The API's primary and its workers, once every worker runs (TALLY_WORKERS=1: one process). */
async function apiPids(primary) {
  if (settings.workers <= 1) return [primary];
  await waitFor(`${settings.workers} workers`, () => childrenOf(primary).length >= settings.workers, 30_000);
  return [primary, ...childrenOf(primary)];
}

/** One measured window: CPU µs per answered decision of the API (all processes) and of its Redis. */
async function measure(side, path, load) {
  await load(side.api, 2); // warm: JIT, connections, both workers
  const before = { api: cpuSnapshot([side.api.pid]), redis: cpuSnapshot([side.redis.pid]) };
  const result = await load(side.api, settings.durationSeconds);
  const after = { api: cpuSnapshot([side.api.pid]), redis: cpuSnapshot([side.redis.pid]) };
  const us = (what) => (cpuSpentMs(before[what], after[what]) * 1000) / result.answered;
  log(
    `${side.name} ${path}: ${result.answered} answered (${result.failed} failed), ` +
      `API ${round1(us('api'))} µs, Redis ${round1(us('redis'))} µs per decision`,
  );
  return { api: us('api'), redis: us('redis'), answered: result.answered, failed: result.failed };
}

/** write + writev calls of the workers per decision, from `strace -c` over one window. */
async function syscalls(side, path, load) {
  const out = join(OUT_DIR, `strace-${side.key}-${path}.txt`);
  rmSync(out, { force: true });
  const workers = childrenOf(side.api.pid);
  const args = ['-c', '-f', '-e', 'trace=write,writev', '-o', out, ...workers.flatMap((p) => ['-p', `${p}`])];
  const strace = spawn('strace', args, { stdio: 'ignore' });
  await sleep(1000); // attached
  const result = await load(side.api, settings.durationSeconds);
  const exited = new Promise((resolve) => strace.once('exit', resolve));
  strace.kill('SIGINT');
  await exited;
  const calls = {};
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(write|writev)\s*$/.exec(line);
    if (m) calls[m[2]] = Number(m[1]);
  }
  const perDecision = ((calls.write ?? 0) + (calls.writev ?? 0)) / result.answered;
  log(
    `${side.name} ${path}: ${calls.write ?? 0} write + ${calls.writev ?? 0} writev for ` +
      `${result.answered} decisions: ${perDecision.toFixed(2)} per decision`,
  );
  return { ...calls, perDecision };
}

async function main() {
  const baseline = process.env.BENCH_BASELINE_DIST;
  if (!baseline || !existsSync(join(baseline, 'apps/decision-api/src/main.js')))
    throw new Error(`BENCH_BASELINE_DIST=${baseline}: no apps/decision-api/src/main.js in it`);
  if (settings.strace) execFileSync('strace', ['-V'], { stdio: 'ignore' });
  mkdirSync(OUT_DIR, { recursive: true });
  const ghz = settings.paths.includes('grpc') ? findGhz(log) : null;
  const loads = { grpc: (api, s) => grpc(ghz, api, s), http: (api, s) => http(api, s) };
  const builds = [
    { key: 'new', name: 'this build', build: {}, port: settings.redisPort },
    {
      key: 'old',
      name: 'baseline',
      build: { dist: baseline, packageJson: join(dirname(baseline), 'package.json') },
      port: settings.redisPort + 1,
    },
  ];
  const sides = [];
  try {
    for (const b of builds) {
      const redis = await startRedis(b.port);
      const env = { TALLY_WORKERS: String(settings.workers) };
      const api = await startApi({ url: redis.url }, settings, OUT_DIR, log, env, b.build);
      sides.push({ ...b, redis, api, pids: await apiPids(api.pid), runs: {} });
    }
    log(`${settings.rate}/s for ${settings.durationSeconds} s, ${settings.rounds} rounds, alternating`);
    for (let n = 0; n < settings.rounds; n++) {
      const order = n % 2 === 0 ? sides : [...sides].reverse();
      for (const path of settings.paths)
        for (const side of order) (side.runs[path] ??= []).push(await measure(side, path, loads[path]));
    }
    const strace = {};
    if (settings.strace)
      for (const path of settings.paths)
        for (const side of sides) strace[`${side.key} ${path}`] = await syscalls(side, path, loads[path]);
    print(sides, strace);
  } finally {
    for (const side of sides) {
      await side.api.stop();
      await side.redis.stop();
    }
    killAllStarted();
  }
}

function print(sides, strace) {
  const [now, old] = sides;
  const lines = ['', `CPU µs per decision at ${settings.rate}/s, median of ${settings.rounds} rounds:`];
  for (const path of settings.paths) {
    for (const what of ['api', 'redis']) {
      const ratios = now.runs[path].map((r, i) => r[what] / old.runs[path][i][what]);
      lines.push(
        `  ${path.padEnd(4)} ${what.padEnd(5)} baseline ${round1(median(old.runs[path].map((r) => r[what])))}` +
          `  this build ${round1(median(now.runs[path].map((r) => r[what])))}` +
          `  ratio ${median(ratios).toFixed(3)} (rounds: ${ratios.map((r) => r.toFixed(3)).join(', ')})`,
      );
    }
  }
  for (const [key, s] of Object.entries(strace))
    lines.push(`  ${key}: ${s.perDecision.toFixed(2)} write/writev calls per decision (workers)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  killAllStarted();
  process.exit(1);
});
