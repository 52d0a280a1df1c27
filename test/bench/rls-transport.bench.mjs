// ADR 0006: the Envoy RLS served by two transports, measured side by side with ghz.
// One decision API per transport, both up for the whole run and warmed; alternating rounds of ghz
// (1 and 4 descriptors per request, the transports' order swapped every round). Distinct tenants
// (1,000 per descriptor slot, rotating), one private Redis flushed at the start, TALLY_WORKERS=1.
//
//   REDIS_URL=redis://127.0.0.1:<port> GHZ=/path/to/ghz BENCH_TRANSPORTS=nest,raw \
//     node test/bench/rls-transport.bench.mjs
//
// BENCH_TRANSPORTS: the labels of the servers compared. Each runs `BENCH_DIST_<LABEL>` (another
// build of the tree, e.g. a branch with the other transport) or else this tree's dist/, with
// BENCH_RLS_TRANSPORT=<label> in its environment (for a build that holds both transports).
// BENCH_ROUNDS (3), BENCH_SECONDS (10), BENCH_CONCURRENCY (50), BENCH_PORT_BASE (18200),
// BENCH_RATE (unset: as fast as possible; else requests/s in total, for CPU per request below
// saturation). CPU per request: the server's utime + stime over the run / requests answered.
// Prints a Markdown table and writes every ghz report under .local/bench-rls-transport/.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { API_MAIN, ROOT } from './lib/built.mjs';
import { startProcess, waitFor } from './lib/processes.mjs';

const env = process.env;
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const GHZ = env.GHZ ?? 'ghz';
const TRANSPORTS = (env.BENCH_TRANSPORTS ?? 'nest,raw').split(',');
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY ?? 50);
const PORT_BASE = Number(env.BENCH_PORT_BASE ?? 18200);
/** A fixed total rate (ghz --rps) instead of as fast as possible: CPU per request below saturation. */
const RATE = env.BENCH_RATE;
const TOKEN = 'bench-caller-token-0123456789';
const OUT = join(ROOT, '.local/bench-rls-transport');
const PROTO_DIR = join(ROOT, 'libs/envoy-rls/src/proto');
const CLK_TCK = 100;

const POLICY = [
  'policies:',
  '  - name: bench-rls',
  '    match: { domain: bench, route: evaluate }',
  '    key: [tenant, principal]',
  '    windows:',
  '      - { name: burst, role: burst, algorithm: token_bucket, limit: 10000000, period: 1s }',
  '      - { name: sustained, role: sustained, algorithm: fixed_window, limit: 10000000000, period: 1m }',
  '',
].join('\n');

/** ghz request template: `n` descriptors, each of its own tenant (1,000 rotating per slot). */
function requestData(n) {
  const descriptors = Array.from({ length: n }, (_, i) => ({
    entries: [
      { key: 'tenant', value: `t${i}-{{mod .RequestNumber 1000}}` },
      { key: 'principal', value: 'svc-42' },
      { key: 'route', value: 'evaluate' },
    ],
  }));
  return JSON.stringify({ domain: 'bench', descriptors });
}

/** utime + stime of a process, in µs. */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

function rssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

function ghz(port, n, seconds, file) {
  const args = [
    '--insecure',
    '--import-paths',
    PROTO_DIR,
    '--proto',
    join(PROTO_DIR, 'envoy/service/ratelimit/v3/rls.proto'),
    '--call',
    'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    '-c',
    String(CONCURRENCY),
    '-z',
    `${seconds}s`,
    ...(RATE ? ['--rps', RATE] : []),
    '-m',
    JSON.stringify({ authorization: `Bearer ${TOKEN}` }),
    '-d',
    requestData(n),
    '--format',
    'json',
    '-o',
    file,
    `127.0.0.1:${port}`,
  ];
  const run = spawnSync(GHZ, args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ghz failed: ${run.stderr}`);
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const codes = report.statusCodeDistribution ?? {};
  const p99 = report.latencyDistribution?.find((d) => d.percentage === 99)?.latency ?? NaN;
  return { count: report.count, rps: report.rps, p99Ms: p99 / 1e6, codes };
}

function flushRedis() {
  const url = new URL(REDIS_URL);
  execFileSync('redis-cli', ['-h', url.hostname, '-p', url.port || '6379', 'FLUSHALL'], { stdio: 'ignore' });
}

async function startApi(transport, slot) {
  const httpPort = PORT_BASE + 2 * slot;
  const grpcPort = httpPort + 1;
  const policies = join(OUT, 'policies.yaml');
  writeFileSync(policies, POLICY);
  const flags = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    .scripts['start:decision-api'].split(' ')
    .filter((w) => /^--[a-z-]+=\S+$/.test(w));
  const dist = env[`BENCH_DIST_${transport.toUpperCase()}`];
  const main = dist ? join(dist, 'apps/decision-api/src/main.js') : API_MAIN;
  const child = startProcess(`decision-api (${transport})`, process.execPath, [...flags, main], {
    REDIS_URL,
    TALLY_POLICIES: policies,
    TALLY_HTTP_PORT: String(httpPort),
    TALLY_GRPC_PORT: String(grpcPort),
    TALLY_HOST: '127.0.0.1',
    TALLY_API_TOKENS: TOKEN,
    TALLY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    TALLY_TOKEN_SECRET: 'bench-token-secret-0123456789',
    TALLY_LOG_LEVEL: 'warn',
    TALLY_WORKERS: '1',
    // A starved Redis on a shared machine must not turn into fast UNAVAILABLE answers that count as load.
    TALLY_BACKEND_TIMEOUT_MS: env.BENCH_BACKEND_TIMEOUT_MS ?? '2000',
    BENCH_RLS_TRANSPORT: transport,
  });
  const ready = async () => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/readyz`, {
      headers: { authorization: 'Bearer bench-admin-token-0123456789' },
    });
    const body = await res.json();
    return res.ok && body.components?.grpc?.status === 'up';
  };
  try {
    await waitFor(`decision-api (${transport})`, ready, 30_000);
  } catch (error) {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  }
  return { child, grpcPort };
}

const runs = [];
mkdirSync(OUT, { recursive: true });
const started = new Date().toISOString();
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
// Both servers stay up, idle in turn: each pair of runs (one per transport, order swapped every round)
// is seconds apart, so a change in the machine's load weighs on both alike.
flushRedis();
const servers = new Map();
try {
  for (const [slot, transport] of TRANSPORTS.entries()) {
    const server = await startApi(transport, slot);
    servers.set(transport, server);
    ghz(server.grpcPort, 1, 3, join(OUT, `warm-${transport}.json`));
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? TRANSPORTS : [...TRANSPORTS].reverse();
    for (const n of [1, 4])
      for (const transport of order) {
        const { child, grpcPort } = servers.get(transport);
        const file = join(OUT, `r${round}-${transport}-d${n}.json`);
        const cpu0 = cpuMicros(child.pid);
        const result = ghz(grpcPort, n, SECONDS, file);
        const cpu = cpuMicros(child.pid) - cpu0;
        const ok = result.codes.OK ?? 0;
        const row = {
          round,
          transport,
          descriptors: n,
          rps: Math.round(result.rps),
          p99Ms: Number(result.p99Ms.toFixed(1)),
          cpuUsPerReq: Math.round(cpu / result.count),
          rssMb: rssMb(child.pid),
          notOk: result.count - ok,
          load1: loadavg()[0].toFixed(2),
        };
        runs.push(row);
        console.log(JSON.stringify(row));
        if (row.notOk > 0) console.log(`  status codes: ${JSON.stringify(result.codes)}`);
      }
  }
} finally {
  for (const { child } of servers.values()) await child.stop();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `\n${cpus().length} × ${cpus()[0].model}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
console.log(
  `started ${started}, load average before: ${loadBefore}, after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  '\n| transport | descriptors | req/s (median; min–max) | p99 ms (median; min–max) | CPU µs/req (median; min–max) |',
);
console.log('|---|---|---|---|---|');
for (const n of [1, 4])
  for (const transport of TRANSPORTS) {
    const rows = runs.filter((r) => r.transport === transport && r.descriptors === n);
    const cell = (k) =>
      `${median(rows.map((r) => r[k]))}; ${Math.min(...rows.map((r) => r[k]))}–${Math.max(...rows.map((r) => r[k]))}`;
    console.log(`| ${transport} | ${n} | ${cell('rps')} | ${cell('p99Ms')} | ${cell('cpuUsPerReq')} |`);
  }
for (const n of [1, 4]) {
  const rps = (t) => median(runs.filter((r) => r.transport === t && r.descriptors === n).map((r) => r.rps));
  if (TRANSPORTS.length === 2)
    console.log(
      `${n} descriptor(s): ${TRANSPORTS[0]}/${TRANSPORTS[1]} throughput = ${(rps(TRANSPORTS[0]) / rps(TRANSPORTS[1])).toFixed(3)}`,
    );
}
writeFileSync(join(OUT, 'runs.json'), JSON.stringify(runs, null, 2));
