// The decision API's memory phase of the hot-path bench: the API as production runs it (its start
// flags, TALLY_WORKERS=BENCH_MEMORY_WORKERS, default 2: a primary and one worker per core here),
// per process (primary and each worker) RSS at rest, its peak under load with a distinct key per
// request for BENCH_MEMORY_SECONDS, and after; then its CPU µs per request at a fixed rate
// (BENCH_MEMORY_RATE req/s for BENCH_DURATION, all processes summed, GC threads included). Once per
// path, each on an API of its own: HTTP (autocannon -c 50 on POST /v1/decisions) and gRPC (ghz
// -c 50 over 10 HTTP/2 connections on Envoy's ShouldRateLimit, one descriptor; skipped, and said so,
// when no ghz can be found: see lib/ghz.mjs).
// With BENCH_BASELINE_DIST (another build's dist/, e.g. the tree before a change, built outside this
// checkout; its start flags are read from the package.json beside it) both builds are measured in
// alternating rounds: before/after in one run, on the same machine load.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { findGhz, measureGrpc, oneDescriptorNewKey } from './ghz.mjs';
import { round } from './load.mjs';
import { processTree, smapsMemory } from './rss.mjs';
import { AUTH, startApi } from './servers.mjs';

const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);

export const MEMORY_SETTINGS = {
  workers: int('BENCH_MEMORY_WORKERS', 2),
  loadSeconds: int('BENCH_MEMORY_SECONDS', 20),
  connections: 50,
  /** gRPC: HTTP/2 connections the calls share (Envoy holds one per worker thread). */
  grpcConnections: 10,
  rate: int('BENCH_MEMORY_RATE', 600),
};

let sequence = 0;
/** A new tenant per request: per-tenant state anywhere in the process (a cache, a label) would show. */
function distinctTenants() {
  return [
    {
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          selectors: { tenant: `mem-${sequence++}`, principal: 'svc-42', route: 'evaluate' },
          cost: 1,
        }),
      }),
    },
  ];
}

function load(url, options) {
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        requests: distinctTenants(),
        ...options,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
}

/** User + system CPU of a process since it started, in ms (all its threads; CLK_TCK = 100). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The primary and its workers, once as many workers as asked are running (a worker boots in ~1 s). */
async function apiProcesses(primaryPid, workers) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const tree = processTree(primaryPid);
    if (workers <= 1 || tree.length === workers + 1) return tree;
    if (Date.now() > deadline) throw new Error(`decision-api: ${tree.length - 1} of ${workers} workers up`);
    await sleep(200);
  }
}

/** ShouldRateLimit with one descriptor of the bench policy, a new principal (a new key) per call. */
const GRPC_DATA = oneDescriptorNewKey('memory', 'mem');

/** How each path is loaded: `max` as fast as it answers, `fixed` at a rate; both → answered, failed. */
function pathLoads(ghz) {
  const http = (api, options) =>
    load(api.decisionsUrl, options).then((r) => ({
      answered: r['2xx'],
      failed: r.non2xx + r.errors,
      perSec: r.requests.average,
    }));
  const grpc = (api, options, seconds) =>
    measureGrpc(
      { bin: ghz, target: api.grpcTarget, data: GRPC_DATA, metadata: AUTH, ...options },
      seconds,
    ).then((r) => ({ answered: r.ok, failed: r.requests - r.ok, perSec: r.okPerSec }));
  const { connections, grpcConnections, loadSeconds, rate } = MEMORY_SETTINGS;
  return {
    http: {
      warm: (api, workers) => http(api, { connections: 10, amount: 200 * workers }),
      max: (api) => http(api, { connections, duration: loadSeconds }),
      fixed: (api, seconds) => http(api, { connections: 20, overallRate: rate, duration: seconds }),
    },
    grpc: {
      // ≈ 200 calls per worker, as for HTTP, over every connection.
      warm: (api, workers) =>
        grpc(api, { concurrency: 10, connections: grpcConnections, rps: 100 * workers }, 2),
      max: (api) => grpc(api, { concurrency: connections, connections: grpcConnections }, loadSeconds),
      fixed: (api, seconds) =>
        grpc(api, { concurrency: 20, connections: grpcConnections, rps: rate }, seconds),
    },
  };
}

async function measureBuild(name, path, loads, build, store, settings, outDir, log) {
  const workers = { TALLY_WORKERS: String(MEMORY_SETTINGS.workers) };
  const api = await startApi(store, settings, outDir, log, workers, build);
  try {
    const pids = await apiProcesses(api.pid, MEMORY_SETTINGS.workers);
    // Every worker answers before "at rest" is read: a worker that has not served yet is smaller.
    await loads.warm(api, pids.length);
    await sleep(2000);
    const rest = pids.map(smapsMemory);
    const peak = pids.map(() => 0);
    const sampler = setInterval(() => {
      pids.forEach((pid, i) => (peak[i] = Math.max(peak[i], smapsMemory(pid).rss ?? 0)));
    }, 250);
    log(
      `memory ${name}, ${path}: -c ${MEMORY_SETTINGS.connections}, ${MEMORY_SETTINGS.loadSeconds} s, distinct keys`,
    );
    const max = await loads.max(api);
    clearInterval(sampler);
    const after = pids.map(smapsMemory);
    log(`memory ${name}, ${path}: CPU at ${MEMORY_SETTINGS.rate}/s for ${settings.durationSeconds} s`);
    await loads.fixed(api, 3);
    const before = pids.map(cpuMs);
    const fixed = await loads.fixed(api, settings.durationSeconds);
    const cpu = pids.reduce((sum, pid, i) => sum + cpuMs(pid) - before[i], 0);
    const processes = pids.map((pid, i) => ({
      role: i === 0 && pids.length > 1 ? 'primary' : 'worker',
      rest: rest[i],
      peakMb: peak[i],
      after: after[i],
    }));
    return {
      processes,
      maxLoad: { reqPerSec: round(max.perSec), failed: max.failed },
      fixedRate: {
        answered: fixed.answered,
        failed: fixed.failed,
        cpuUsPerRequest: fixed.answered > 0 ? round((cpu * 1000) / fixed.answered, 1) : null,
      },
    };
  } finally {
    await api.stop();
  }
}

/** The phase: this build, and the baseline in alternating rounds when BENCH_BASELINE_DIST is given. */
export async function memoryPhase(store, settings, outDir, log) {
  const builds = [{ name: 'this build', build: {} }];
  const baseline = process.env.BENCH_BASELINE_DIST;
  if (baseline) {
    if (!existsSync(join(baseline, 'apps/decision-api/src/main.js')))
      throw new Error(`BENCH_BASELINE_DIST=${baseline}: no apps/decision-api/src/main.js in it`);
    builds.unshift({
      name: `baseline ${baseline}`,
      build: { dist: baseline, packageJson: join(dirname(baseline), 'package.json') },
    });
  }
  let ghz = null;
  try {
    ghz = findGhz(log);
  } catch (error) {
    log(`memory: no gRPC phase: ${error.message}`);
  }
  const loads = pathLoads(ghz);
  const paths = ghz ? ['http', 'grpc'] : ['http'];
  const rounds = baseline ? settings.rounds : 1;
  const results = Object.fromEntries(builds.map((b) => [b.name, []]));
  for (let n = 0; n < rounds; n++) {
    const order = n % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const measured = {};
      for (const path of paths) {
        await store.flush();
        measured[path] = await measureBuild(
          build.name,
          path,
          loads[path],
          build.build,
          store,
          settings,
          outDir,
          log,
        );
      }
      results[build.name].push(measured);
    }
  }
  return { settings: MEMORY_SETTINGS, paths, builds: results };
}

const mb = (m) => `${m.rss} (${m.anon} anon)`;

export function printMemory(memory) {
  const { workers, connections, rate } = memory.settings;
  const lines = ['', `decision API memory, TALLY_WORKERS=${workers}, MB (smaps_rollup):`];
  for (const [name, runs] of Object.entries(memory.builds)) {
    runs.forEach((run, r) => {
      for (const path of memory.paths ?? ['http']) {
        const m = run[path];
        lines.push(
          `  ${name}, round ${r + 1}, ${path}: ${m.maxLoad.reqPerSec}/s at -c ${connections} ` +
            `(${m.maxLoad.failed} failed); ${m.fixedRate.cpuUsPerRequest} µs CPU per request at ${rate}/s`,
        );
        for (const p of m.processes)
          lines.push(`    ${p.role.padEnd(8)} rest ${mb(p.rest)}  peak ${p.peakMb}  after ${mb(p.after)}`);
      }
    });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
