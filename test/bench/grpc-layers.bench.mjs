// What each layer of the decision API's gRPC server costs per call, without the decision: one Node
// process per variant (grpc-layers.server.mjs: a bare node:http2 server doing the gRPC framing
// itself, the same with Tally's per-call checks, grpc-js as it ships and with a server's options,
// Tally's server as the API runs it; on request, Tally's server from another build), each answering a fixed
// RateLimitResponse with no Redis, driven by ghz with Envoy's rls.proto. Every variant runs with the
// node flags and environment of package.json's `start:decision-api` (what production runs).
//
// Per round, per load (a fixed rate: ghz --rps, concurrency 20 over 10 connections; saturation:
// concurrency 50 over 10 connections), every variant is measured once, in an order that rotates by
// one each round: `BENCH_WARMUP` s thrown away, then `BENCH_DURATION` s measured. Printed per
// measurement and as medians over the rounds: CPU µs per answered call of the server process
// (utime + stime from /proc, its threads included), the ratio to `http2` within each round (median
// and rounds), what the variant adds over the one before it (median of the per-round differences),
// bytes freed by V8's collections per call (v8.GCProfiler over the measured window: what a call
// allocates, near enough), calls/s answered. Figures also go to .local/bench/grpc-layers.json.
//
//   GHZ_BIN=/path/to/ghz node test/bench/grpc-layers.bench.mjs
//
// Settings (env): BENCH_VARIANTS (the first five of VARIANTS, in that order; the first is the
// reference of the ratios, each row adds over the row above), BENCH_LOADS (rate,saturation),
// BENCH_RATE (2000 calls/s), BENCH_ROUNDS (5), BENCH_DURATION (8 s), BENCH_WARMUP (2 s),
// BENCH_PREWARM (5 s per variant before the first round), BENCH_PORT_BASE (18900),
// BENCH_BASELINE_DIST (another build's dist/: the variant tally-baseline runs its libs).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib/built.mjs';
import { findGhz, measureGrpc, oneDescriptorNewKey } from './lib/ghz.mjs';
import { median } from './lib/report.mjs';
import { waitFor } from './lib/processes.mjs';
import { cpuSnapshot, cpuSpentMs, machineCpuMs } from './lib/proc-cpu.mjs';
import { AUTH, startCommand } from './lib/servers.mjs';

const VARIANTS = ['http2', 'http2-gated', 'grpc-js', 'grpc-js-opts', 'tally', 'tally-baseline'];
/** Run unless BENCH_VARIANTS names others: the layers, bottom to top. */
const DEFAULT_VARIANTS = VARIANTS.slice(0, 5);
const env = process.env;
const int = (name, fallback) => Number.parseInt(env[name] ?? String(fallback), 10);
const settings = {
  variants: (env.BENCH_VARIANTS ?? DEFAULT_VARIANTS.join(',')).split(','),
  loads: (env.BENCH_LOADS ?? 'rate,saturation').split(','),
  rate: int('BENCH_RATE', 2000),
  rounds: int('BENCH_ROUNDS', 5),
  duration: int('BENCH_DURATION', 8),
  warmup: int('BENCH_WARMUP', 2),
  prewarm: int('BENCH_PREWARM', 5),
  portBase: int('BENCH_PORT_BASE', 18900),
};
const SERVER = join(ROOT, 'test/bench/grpc-layers.server.mjs');
const OUT_DIR = join(ROOT, '.local/bench');
/** One descriptor, a new value per call (as hot-path-cpu.bench.mjs sends). */
const DATA = oneDescriptorNewKey('bench', 'cpu');
const log = (line) => process.stdout.write(`[bench] ${line}\n`);
const r1 = (x) => Math.round(x * 10) / 10;
const r2 = (x) => x.toFixed(2);

const children = new Set();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

/** A variant's server, started as production starts the API; resolves once it listens. */
async function startServer(variant, port) {
  const start = startCommand();
  // tally-baseline: Tally's server with the libs of another build (before/after a change of them).
  const dist = variant === 'tally-baseline' ? { BENCH_DIST: baselineDist() } : {};
  const child = spawn(process.execPath, [...start.flags, SERVER, variant, String(port)], {
    env: { ...process.env, ...start.env, ...dist },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  await waitFor(`${variant} on ${port}`, () => {
    if (child.exitCode !== null) throw new Error(`${variant} exited: ${output}`);
    return output.includes('listening');
  });
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(message);
    });
  return {
    variant,
    pid: child.pid,
    target: `127.0.0.1:${port}`,
    gcStart: () => child.send({ gc: 'start' }),
    gcStop: () => ask({ gc: 'stop' }).then((m) => m.gc),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

function baselineDist() {
  const dist = env.BENCH_BASELINE_DIST;
  if (!dist || !existsSync(join(dist, 'libs/envoy-rls/src/index.js')))
    throw new Error(`tally-baseline needs BENCH_BASELINE_DIST (another build's dist/), got ${dist}`);
  return dist;
}

function ghzOptions(ghz, server, load) {
  const base = { bin: ghz, target: server.target, data: DATA, metadata: AUTH, connections: 10 };
  return load === 'rate' ? { ...base, concurrency: 20, rps: settings.rate } : { ...base, concurrency: 50 };
}

async function measure(ghz, server, load) {
  const o = ghzOptions(ghz, server, load);
  await measureGrpc(o, settings.warmup);
  const machineBefore = machineCpuMs();
  const before = cpuSnapshot([server.pid]);
  server.gcStart();
  const result = await measureGrpc(o, settings.duration);
  const gc = await server.gcStop();
  const after = cpuSnapshot([server.pid]);
  const machineAfter = machineCpuMs();
  const cpuMs = cpuSpentMs(before, after);
  const seconds = result.durationSeconds;
  const idleMsPerSec =
    machineBefore && machineAfter
      ? (machineAfter.total - machineAfter.busy - (machineBefore.total - machineBefore.busy)) / seconds
      : null;
  const m = {
    cpuUs: (cpuMs * 1000) / result.ok,
    allocBytes: gc.freedBytes / result.ok,
    collections: gc.collections,
    okPerSec: result.okPerSec,
    failed: result.requests - result.ok,
    p99Ms: result.latencyMs.p99,
    serverMsPerSec: cpuMs / seconds,
    idleMsPerSec,
    load1m: result.loadAvg1m,
  };
  log(
    `${load} ${server.variant.padEnd(12)} ${r1(m.cpuUs)} µs/call, ${Math.round(m.allocBytes)} B/call ` +
      `(${m.collections} GCs), ${m.okPerSec} calls/s, ${m.failed} failed, p99 ${m.p99Ms} ms; ` +
      `server ${Math.round(m.serverMsPerSec)} ms/s, machine idle ${Math.round(idleMsPerSec ?? -1)} ms/s, ` +
      `load ${m.load1m.join('→')}`,
  );
  return m;
}

function report(runs) {
  const base = settings.variants[0];
  const lines = [];
  for (const load of settings.loads) {
    const title = load === 'rate' ? `at ${settings.rate} calls/s` : 'at saturation (concurrency 50)';
    lines.push(
      '',
      `CPU per call ${title}, ${settings.rounds} rounds, medians; ratios to ${base} within each round:`,
    );
    lines.push(
      '| variant | µs CPU per call | × ' +
        base +
        ' (rounds) | added over the row above, µs (rounds) | bytes freed per call | calls/s |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    settings.variants.forEach((variant, i) => {
      const own = runs[load][variant];
      const ref = runs[load][base];
      const ratios = own.map((m, k) => m.cpuUs / ref[k].cpuUs);
      const prev = i > 0 ? runs[load][settings.variants[i - 1]] : undefined;
      const added = prev ? own.map((m, k) => m.cpuUs - prev[k].cpuUs) : undefined;
      lines.push(
        `| ${variant} | ${r1(median(own.map((m) => m.cpuUs)))} (${own.map((m) => r1(m.cpuUs)).join(', ')}) ` +
          `| ${r2(median(ratios))} (${ratios.map(r2).join(', ')}) ` +
          `| ${added ? `${r1(median(added))} (${added.map(r1).join(', ')})` : '–'} ` +
          `| ${Math.round(median(own.map((m) => m.allocBytes)))} ` +
          `| ${Math.round(median(own.map((m) => m.okPerSec)))} (${own.map((m) => Math.round(m.okPerSec)).join(', ')}) |`,
      );
    });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main() {
  for (const v of settings.variants)
    if (!VARIANTS.includes(v)) throw new Error(`BENCH_VARIANTS: unknown ${v}`);
  const ghz = findGhz(log);
  mkdirSync(OUT_DIR, { recursive: true });
  log(
    `${new Date().toISOString()}, ${cpus().length} cores, load average ${loadavg().map(r2).join(' ')}; ` +
      `${settings.rounds} rounds of ${settings.duration} s after ${settings.warmup} s of warm-up`,
  );
  const servers = [];
  try {
    for (const [i, variant] of settings.variants.entries())
      servers.push(await startServer(variant, settings.portBase + i));
    for (const server of servers) await measureGrpc(ghzOptions(ghz, server, 'rate'), settings.prewarm);
    const runs = Object.fromEntries(
      settings.loads.map((load) => [load, Object.fromEntries(settings.variants.map((v) => [v, []]))]),
    );
    for (let round = 0; round < settings.rounds; round++) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      log(`round ${round + 1}: ${order.map((s) => s.variant).join(', ')}`);
      for (const load of settings.loads)
        for (const server of order) runs[load][server.variant].push(await measure(ghz, server, load));
    }
    writeFileSync(join(OUT_DIR, 'grpc-layers.json'), JSON.stringify({ settings, runs }, null, 2));
    log(`${new Date().toISOString()}, load average ${loadavg().map(r2).join(' ')}`);
    report(runs);
  } finally {
    for (const server of servers) await server.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
