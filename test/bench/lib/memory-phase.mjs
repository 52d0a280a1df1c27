// The decision API's memory phase of the hot-path bench: the API as production runs it (its start
// flags, TALLY_WORKERS=BENCH_MEMORY_WORKERS, default 2: a primary and one worker per core here),
// per process (primary and each worker) RSS at rest, its peak under autocannon -c 50 with a distinct
// tenant per request for BENCH_MEMORY_SECONDS, and after; then its CPU µs per request at a fixed rate
// (BENCH_MEMORY_RATE req/s for BENCH_DURATION, all processes summed, GC threads included).
// With BENCH_BASELINE_DIST (another build's dist/, e.g. the tree before a change, built outside this
// checkout; its start flags are read from the package.json beside it) both builds are measured in
// alternating rounds: before/after in one run, on the same machine load.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { round } from './load.mjs';
import { processTree, smapsMemory } from './rss.mjs';
import { AUTH, startApi } from './servers.mjs';

const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);

export const MEMORY_SETTINGS = {
  workers: int('BENCH_MEMORY_WORKERS', 2),
  loadSeconds: int('BENCH_MEMORY_SECONDS', 20),
  connections: 50,
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

async function measureBuild(name, build, store, settings, outDir, log) {
  const workers = { TALLY_WORKERS: String(MEMORY_SETTINGS.workers) };
  const api = await startApi(store, settings, outDir, log, workers, build);
  try {
    const pids = await apiProcesses(api.pid, MEMORY_SETTINGS.workers);
    // Every worker answers before "at rest" is read: a worker that has not served yet is smaller.
    await load(api.decisionsUrl, { connections: 10, amount: 200 * pids.length });
    await sleep(2000);
    const rest = pids.map(smapsMemory);
    const peak = pids.map(() => 0);
    const sampler = setInterval(() => {
      pids.forEach((pid, i) => (peak[i] = Math.max(peak[i], smapsMemory(pid).rss ?? 0)));
    }, 250);
    log(
      `memory ${name}: autocannon -c ${MEMORY_SETTINGS.connections}, ${MEMORY_SETTINGS.loadSeconds} s, distinct tenants`,
    );
    const max = await load(api.decisionsUrl, {
      connections: MEMORY_SETTINGS.connections,
      duration: MEMORY_SETTINGS.loadSeconds,
    });
    clearInterval(sampler);
    const after = pids.map(smapsMemory);
    log(`memory ${name}: CPU at ${MEMORY_SETTINGS.rate} req/s for ${settings.durationSeconds} s`);
    await load(api.decisionsUrl, { connections: 20, overallRate: MEMORY_SETTINGS.rate, duration: 3 });
    const before = pids.map(cpuMs);
    const fixed = await load(api.decisionsUrl, {
      connections: 20,
      overallRate: MEMORY_SETTINGS.rate,
      duration: settings.durationSeconds,
    });
    const cpu = pids.reduce((sum, pid, i) => sum + cpuMs(pid) - before[i], 0);
    const processes = pids.map((pid, i) => ({
      role: i === 0 && pids.length > 1 ? 'primary' : 'worker',
      rest: rest[i],
      peakMb: peak[i],
      after: after[i],
    }));
    return {
      processes,
      maxLoad: { reqPerSec: round(max.requests.average), non2xx: max.non2xx, errors: max.errors },
      fixedRate: {
        answered: fixed['2xx'],
        non2xx: fixed.non2xx,
        cpuUsPerRequest: fixed['2xx'] > 0 ? round((cpu * 1000) / fixed['2xx'], 1) : null,
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
  const rounds = baseline ? settings.rounds : 1;
  const results = Object.fromEntries(builds.map((b) => [b.name, []]));
  for (let n = 0; n < rounds; n++) {
    const order = n % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      await store.flush();
      results[build.name].push(await measureBuild(build.name, build.build, store, settings, outDir, log));
    }
  }
  return { settings: MEMORY_SETTINGS, builds: results };
}

const mb = (m) => `${m.rss} (${m.anon} anon)`;

export function printMemory(memory) {
  const lines = ['', `decision API memory, TALLY_WORKERS=${memory.settings.workers}, MB (smaps_rollup):`];
  for (const [name, runs] of Object.entries(memory.builds)) {
    runs.forEach((run, r) => {
      lines.push(
        `  ${name}, round ${r + 1}: ${run.maxLoad.reqPerSec} req/s at -c ${memory.settings.connections}; ` +
          `${run.fixedRate.cpuUsPerRequest} µs CPU/req at ${memory.settings.rate} req/s`,
      );
      for (const p of run.processes)
        lines.push(`    ${p.role.padEnd(8)} rest ${mb(p.rest)}  peak ${p.peakMb}  after ${mb(p.after)}`);
    });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
