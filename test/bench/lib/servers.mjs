// The two HTTP servers under load, each a child process of the built tree, each checked to answer
// what it is supposed to before any figure is taken (a fast 400 is not a benchmark).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_MAIN, ROOT } from './built.mjs';
import { benchPolicyYaml } from './decide-args.mjs';
import { freePort, startProcess, waitFor } from './processes.mjs';

export const TENANT = 'bench';
// Bearer auth on: the guard is part of the production hot path. The ceiling ignores the header.
const CALLER_TOKEN = 'bench-caller-token-0123456789';
export const AUTH = { authorization: `Bearer ${CALLER_TOKEN}` };

export function singleBody() {
  return JSON.stringify({ selectors: { tenant: TENANT, principal: 'svc-42', route: 'evaluate' }, cost: 1 });
}

export function batchBody(size) {
  return JSON.stringify({
    requests: Array.from({ length: size }, (_, i) => ({
      selectors: { tenant: TENANT, principal: `p${i}`, route: 'evaluate' },
      cost: 1,
    })),
  });
}

async function post(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH },
    body,
  });
  return { status: response.status, json: await response.json() };
}

function expect(what, ok, detail) {
  if (!ok) throw new Error(`sanity check failed: ${what}: ${JSON.stringify(detail).slice(0, 600)}`);
}

async function startServer(name, args, env, port, log) {
  const child = startProcess(name, process.execPath, args, env);
  try {
    await waitFor(name, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000);
  } catch (error) {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  }
  log(`${name} pid ${child.pid} on :${port}`);
  return child;
}

export async function startCeiling(store, settings, log) {
  const port = await freePort();
  const env = { BENCH_PORT: String(port), BENCH_REDIS_URL: store.url, BENCH_SHARDS: String(settings.shards) };
  const child = await startServer('ceiling', [join(ROOT, 'test/bench/ceiling.server.mjs')], env, port, log);
  const decisionsUrl = `http://127.0.0.1:${port}/v1/decisions`;
  try {
    const probe = await post(decisionsUrl, singleBody());
    expect('ceiling answers allowed', probe.status === 200 && probe.json.allowed === true, probe);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { decisionsUrl, stop: () => child.stop() };
}

/**
 * The `--flag=value` node options and the `NAME=value` environment of a package.json's start script
 * of `app` (e.g. `MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 …`); none when it has no such script.
 */
export function startCommand(packageJson = join(ROOT, 'package.json'), app = 'decision-api') {
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8'));
  const words = (pkg.scripts[`start:${app}`] ?? '').split(' ');
  const env = Object.fromEntries(
    words.filter((word) => /^[A-Z_]+=\S*$/.test(word)).map((word) => word.split('=')),
  );
  return { flags: words.filter((word) => /^--[a-z-]+=\S+$/.test(word)), env };
}

/**
 * `extraEnv`: settings of this API only (e.g. durable mode), on top of the bench's. `build`: another
 * build's `dist` directory and the package.json whose start script it runs with (before/after runs).
 */
export async function startApi(store, settings, outDir, log, extraEnv = {}, build = {}) {
  const port = await freePort();
  const grpcPort = await freePort();
  const policies = join(outDir, 'policies.yaml');
  writeFileSync(policies, benchPolicyYaml());
  const profileDir = join(outDir, 'prof');
  const profile = process.env.BENCH_PROFILE === '1';
  // The V8 flags `npm run start:decision-api` runs with (the bench measures what production runs),
  // then extra node flags for what-if runs (e.g. --max-semi-space-size=32, or --require of a patch).
  const extra = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const start = startCommand(build.packageJson);
  const nodeArgs = [
    ...start.flags,
    ...extra,
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  ];
  const env = {
    ...start.env,
    REDIS_URL: store.url,
    TALLY_POLICIES: policies,
    TALLY_HTTP_PORT: String(port),
    TALLY_GRPC_PORT: String(grpcPort),
    TALLY_AUTH: 'bearer',
    TALLY_API_TOKENS: CALLER_TOKEN,
    TALLY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    TALLY_TOKEN_SECRET: 'bench-token-secret-0123456789',
    TALLY_SHARDS: String(settings.shards),
    TALLY_LOG_LEVEL: 'warn',
    // The phases measure one process unless a phase says otherwise (TALLY_WORKERS in its env).
    TALLY_WORKERS: '1',
    ...(process.env.BENCH_BACKEND_TIMEOUT_MS
      ? { TALLY_BACKEND_TIMEOUT_MS: process.env.BENCH_BACKEND_TIMEOUT_MS }
      : {}),
    ...extraEnv,
  };
  const main = build.dist ? join(build.dist, 'apps/decision-api/src/main.js') : API_MAIN;
  const child = await startServer('decision-api', [...nodeArgs, main], env, port, log);
  const base = `http://127.0.0.1:${port}/v1`;
  const api = { decisionsUrl: `${base}/decisions`, batchUrl: `${base}/decisions:batch` };
  try {
    const single = await post(api.decisionsUrl, singleBody());
    expect('API allows the bench request', single.status === 200 && single.json.allowed === true, single);
    expect('API applies the two-window policy', single.json.policies?.[0]?.windows?.length === 2, single);
    const batch = await post(api.batchUrl, batchBody(settings.batchSize));
    expect(
      `batch answers ${settings.batchSize} allowed results`,
      batch.status === 200 &&
        batch.json.results?.length === settings.batchSize &&
        batch.json.results.every((r) => r.status === 200 && r.allowed === true),
      batch,
    );
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    ...api,
    /** For RSS readings of the API process (/proc/<pid>/status). */
    pid: child.pid,
    /** Envoy's RLS (ShouldRateLimit) of the same API, `host:port` for ghz. */
    grpcTarget: `127.0.0.1:${grpcPort}`,
    async stop() {
      const exit = await child.stop();
      if (exit.code !== 0) log(`decision-api exited with ${JSON.stringify(exit)}\n${child.output()}`);
      if (profile) log(`CPU profile of the API in ${profileDir}: node test/bench/profile-summary.mjs <file>`);
    },
  };
}
