// The gRPC load generator of the RLS bench: ghz (github.com/bojand/ghz), driven with Envoy's own
// rls.proto declarations (libs/envoy-rls/src/proto), so Tally and the peer get byte-identical calls.
// Found through GHZ_BIN, else on PATH, else in .local/bin; when absent everywhere and Go is on PATH,
// installed there with `go install` (said so); else the run explains how to get it and stops.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { delimiter, join } from 'node:path';
import { ROOT } from './built.mjs';
import { round } from './load.mjs';

export const GHZ_MODULE = 'github.com/bojand/ghz/cmd/ghz';
/** What `@latest` resolves to (newer tags exist but are not picked by the proxy); built and used here. */
export const GHZ_VERSION = 'v0.93.0';
const LOCAL_BIN = join(ROOT, '.local/bin');
export const PROTO_DIR = join(ROOT, 'libs/envoy-rls/src/proto');
export const RLS_CALL = 'envoy.service.ratelimit.v3.RateLimitService.ShouldRateLimit';

/**
 * ghz's data for ShouldRateLimit with one descriptor of the bench policy in `domain`, a new
 * principal (a new key) per call: `<prefix>-<ghz's request number>`.
 */
export function oneDescriptorNewKey(domain, prefix) {
  return {
    domain,
    descriptors: [
      {
        entries: [
          { key: 'route', value: 'evaluate' },
          { key: 'principal', value: `${prefix}-{{.RequestNumber}}` },
        ],
      },
    ],
  };
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, name);
    if (dir && existsSync(file)) return file;
  }
  return null;
}

/** The ghz binary to use; installs it into .local/bin when it can. Throws with instructions otherwise. */
export function findGhz(log) {
  if (process.env.GHZ_BIN) {
    if (!existsSync(process.env.GHZ_BIN)) throw new Error(`GHZ_BIN=${process.env.GHZ_BIN} does not exist`);
    return process.env.GHZ_BIN;
  }
  const found = onPath('ghz') ?? (existsSync(join(LOCAL_BIN, 'ghz')) ? join(LOCAL_BIN, 'ghz') : null);
  if (found) return found;
  const go = onPath('go');
  const how =
    `ghz is needed for the gRPC cases: set GHZ_BIN, put ghz on PATH, or install it with Go:\n` +
    `  GOBIN=${LOCAL_BIN} go install ${GHZ_MODULE}@${GHZ_VERSION}`;
  if (!go) throw new Error(`${how}\n(no \`go\` on PATH to do it for you)`);
  log(`ghz not found: installing ${GHZ_MODULE}@${GHZ_VERSION} into ${LOCAL_BIN} with go install`);
  mkdirSync(LOCAL_BIN, { recursive: true });
  try {
    execFileSync(go, ['install', `${GHZ_MODULE}@${GHZ_VERSION}`], {
      env: { ...process.env, GOBIN: LOCAL_BIN },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (error) {
    throw new Error(`${how}\n(go install failed: ${error.message})`);
  }
  return join(LOCAL_BIN, 'ghz');
}

function runGhz(bin, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0)
        return reject(new Error(`ghz exited with ${code}: ${err.trim() || out.slice(0, 2000)}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`ghz printed no JSON report: ${out.slice(0, 2000)} ${err}`));
      }
    });
  });
}

const ms = (ns) => round(ns / 1e6, 2);

/**
 * One ghz run of ShouldRateLimit against `target` for `seconds` (a warmup is such a run, thrown away).
 * @param {{ bin: string, target: string, data: object, metadata?: object, concurrency: number,
 *   connections: number, rps?: number }} o  `rps`: a fixed rate (ghz `--rps`) instead of as fast as it can
 */
export async function measureGrpc(o, seconds) {
  const args = [
    '--insecure',
    '--proto',
    join(PROTO_DIR, 'envoy/service/ratelimit/v3/rls.proto'),
    '--import-paths',
    PROTO_DIR,
    '--call',
    RLS_CALL,
    '--concurrency',
    String(o.concurrency),
    '--connections',
    String(o.connections),
    '--data',
    JSON.stringify(o.data),
    ...(o.metadata ? ['--metadata', JSON.stringify(o.metadata)] : []),
    ...(o.rps ? ['--rps', String(o.rps)] : []),
    '--format',
    'json',
    '--duration',
    `${seconds}s`,
    // Calls still in flight when the duration ends complete and count, instead of ghz's default of
    // closing the connections under them and reporting each as an error.
    '--duration-stop',
    'wait',
    o.target,
  ];
  const loadBefore = loadavg()[0];
  const report = await runGhz(o.bin, args);
  const at = (p) => ms(report.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? 0);
  const statuses = report.statusCodeDistribution ?? {};
  const ok = statuses.OK ?? 0;
  const elapsed = report.total / 1e9;
  return {
    requests: report.count,
    ok,
    okPerSec: round(ok / elapsed),
    latencyMs: { p50: at(50), p90: at(90), p99: at(99), max: ms(report.slowest) },
    statuses,
    errors: report.errorDistribution ?? {},
    durationSeconds: round(elapsed, 2),
    loadAvg1m: [round(loadBefore, 2), round(loadavg()[0], 2)],
  };
}
