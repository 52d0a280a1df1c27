// What Redis does per decision under a gRPC load and under an HTTP load at the same fixed rate: the
// decision API as `npm run start:decision-api` runs it, with the RLS bench's policy file (the peer's
// configuration converted by import-envoy: one fixed window per descriptor, a new tenant per call),
// on a private redis-server of its own, no relay (the outbox is written, not shipped). Per measurement,
// per answered decision: redis-server CPU µs (/proc), its reads and writes (`INFO stats`
// total_reads_processed / total_writes_processed: one read per wake-up with data per connection),
// request bytes, and `INFO commandstats` per command (calls per decision, µs per call). With
// BENCH_STRACE=1 a last pass per case counts redis-server's syscalls per decision (`strace -c -f`;
// strace slows what it traces: that pass gives counts, never CPU). Printed figures, not a timed test.
// Settings (env): GHZ_BIN, BENCH_RATE (2000 decisions/s), BENCH_DURATION (10 s), BENCH_ROUNDS (2),
// BENCH_CASES (grpc-1,http), BENCH_RLS_WORKERS (2), BENCH_REDIS_PORT (6472), BENCH_PORT_BASE (API
// HTTP +0, gRPC +1; unset: free ports), BENCH_STRACE (0).
// Run: npm run build && GHZ_BIN=<ghz> node test/bench/redis-per-decision.mjs
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ROOT } from './lib/built.mjs';
import { findGhz } from './lib/ghz.mjs';
import { cpuSnapshot, cpuSpentMs } from './lib/proc-cpu.mjs';
import { killAllStarted } from './lib/processes.mjs';
import { writeConfigs } from './lib/rls-configs.mjs';
import { caseLoad } from './lib/rls-load.mjs';
import { startPlainRedis } from './lib/rls-peer.mjs';
import { portsFrom, tallyTargets } from './lib/rls-sides.mjs';
import { startTallyApi } from './lib/rls-tally.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const settings = {
  rate: int('BENCH_RATE', 2000),
  durationSeconds: int('BENCH_DURATION', 10),
  rounds: int('BENCH_ROUNDS', 2),
  cases: (process.env.BENCH_CASES ?? 'grpc-1,http').split(','),
  workers: process.env.BENCH_RLS_WORKERS ?? '2',
  redisPort: int('BENCH_REDIS_PORT', 6472),
  strace: process.env.BENCH_STRACE === '1',
  shards: 64,
  partitions: 12,
};
const log = (line) => process.stdout.write(`[bench] ${line}\n`);

function parseInfo(text) {
  const fields = {};
  for (const line of text.split('\r\n')) {
    const m = /^([^:#]+):(.*)$/.exec(line);
    if (m) fields[m[1]] = m[2];
  }
  return fields;
}

async function snapshot(redis, pid) {
  const info = parseInfo(await redis.info('all'));
  const commands = {};
  for (const [key, value] of Object.entries(info)) {
    const m = key.startsWith('cmdstat_') ? /calls=(\d+),usec=(\d+)/.exec(value) : null;
    if (m) commands[key.slice('cmdstat_'.length)] = { calls: Number(m[1]), usec: Number(m[2]) };
  }
  const n = (k) => Number(info[k]);
  return {
    cpu: cpuSnapshot([pid]),
    commands,
    reads: n('total_reads_processed'),
    writes: n('total_writes_processed'),
    bytesIn: n('total_net_input_bytes'),
  };
}

/** Per answered decision between two snapshots. */
function perDecision(a, b, decisions) {
  const commands = {};
  for (const [name, now] of Object.entries(b.commands)) {
    const then = a.commands[name] ?? { calls: 0, usec: 0 };
    const calls = now.calls - then.calls;
    if (calls <= 0 || name === 'info') continue;
    commands[name] = { perDecision: calls / decisions, usPerCall: (now.usec - then.usec) / calls };
  }
  return {
    decisions,
    redisCpuUs: (cpuSpentMs(a.cpu, b.cpu) * 1000) / decisions,
    readsPerDecision: (b.reads - a.reads) / decisions,
    writesPerDecision: (b.writes - a.writes) / decisions,
    bytesInPerDecision: (b.bytesIn - a.bytesIn) / decisions,
    commands,
  };
}

const f = (x, d = 1) => x.toFixed(d);
function line(name, m) {
  const commands = Object.entries(m.commands)
    .map(([c, v]) => `${c} ${f(v.perDecision, 2)}×${f(v.usPerCall)}µs`)
    .join(', ');
  return (
    `${name}: ${m.decisions} decisions, Redis ${f(m.redisCpuUs)} µs CPU, ${f(m.readsPerDecision, 3)} reads ` +
    `(${f(1 / m.readsPerDecision)} decisions per read), ${f(m.bytesInPerDecision, 0)} bytes in; ${commands}`
  );
}

/** redis-server's syscalls per decision over one window (strace -c -f). */
async function syscalls(pid, load) {
  const out = join(OUT_DIR, `strace-redis-${pid}.txt`);
  rmSync(out, { force: true });
  const strace = spawn('strace', ['-c', '-f', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 1000)); // attached
  const result = await load(settings.durationSeconds);
  const exited = new Promise((resolve) => strace.once('exit', resolve));
  strace.kill('SIGINT');
  await exited;
  const calls = {};
  for (const row of readFileSync(out, 'utf8').split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(row);
    if (m && m[2] !== 'total') calls[m[2]] = Number(m[1]) / result.ok;
  }
  return calls;
}

async function main() {
  mkdirSync(OUT_DIR, { recursive: true });
  const ghz = settings.cases.some((c) => c.startsWith('grpc')) ? findGhz(log) : null;
  const configs = writeConfigs(OUT_DIR);
  const server = await startPlainRedis('redis-server', settings.redisPort, log);
  const redis = new Redis(server.url);
  let api;
  try {
    const [http, grpc] = await portsFrom(0, 2);
    // No broker is reached: the API only appends to the outbox streams.
    const stack = { redisUrl: server.url, brokers: '127.0.0.1:9' };
    api = await startTallyApi(
      { stack, settings, policies: configs.policies, ports: { http, grpc }, outDir: OUT_DIR },
      log,
    );
    const side = tallyTargets(api);
    const loadOf = (name) =>
      caseLoad(name, side, { ghz, concurrency: 50, grpcConnections: 10, rate: settings.rate });
    log(
      `${settings.rate}/s for ${settings.durationSeconds} s, ${settings.rounds} rounds, workers ${settings.workers}`,
    );
    for (let n = 0; n < settings.rounds; n++)
      for (const name of settings.cases) {
        const load = loadOf(name);
        await load(2); // warm: JIT, connections, both workers
        const before = await snapshot(redis, server.pid);
        const result = await load(settings.durationSeconds);
        log(
          `round ${n + 1} ${line(name, perDecision(before, await snapshot(redis, server.pid), result.ok))}`,
        );
      }
    if (settings.strace)
      for (const name of settings.cases) {
        const calls = await syscalls(server.pid, loadOf(name));
        const total = Object.values(calls).reduce((s, x) => s + x, 0);
        const each = Object.entries(calls).map(([c, x]) => `${c} ${f(x, 3)}`);
        log(`${name}: redis-server syscalls per decision ${f(total, 2)} (${each.join(', ')})`);
      }
  } finally {
    await api?.stop();
    redis.disconnect();
    await server.stop();
    killAllStarted();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  killAllStarted();
  process.exit(1);
});
