// Tally's side of the RLS bench: the built decision API as `npm run start:decision-api` runs it (its
// V8 flags and environment, workers = one per core unless BENCH_RLS_WORKERS says otherwise, bearer auth, the ledger
// on: every allowed decision appends its outbox entry), on the private stack's Redis, with the policy
// file import-envoy made from the peer's configuration. Sanity-checked over gRPC before any figure.
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { API_MAIN, loadBuilt } from './built.mjs';
import { appEnv } from './ledger-apps.mjs';
import { startProcess, waitFor } from './processes.mjs';
import { startCommand } from './servers.mjs';

const CALLER_TOKEN = 'bench-caller-token-0123456789';
export const TALLY_AUTH = { authorization: `Bearer ${CALLER_TOKEN}` };

/** One ShouldRateLimit call with grpc-js (the bench's own check, not its load). */
export function rlsCall(target, request, metadata = {}) {
  const { Client } = loadBuilt('libs/envoy-rls/src/index.js').loadRateLimitService();
  const client = new Client(target, credentials.createInsecure());
  const meta = new Metadata();
  for (const [k, v] of Object.entries(metadata)) meta.set(k, v);
  return new Promise((resolve, reject) => {
    client.ShouldRateLimit(request, meta, { deadline: Date.now() + 5000 }, (error, response) => {
      client.close();
      if (error) reject(error);
      else resolve(response);
    });
  });
}

/** Every descriptor allowed and counted by a rule (`current_limit` set): the call did the work. */
export function expectCounted(side, request, response) {
  const statuses = response?.statuses ?? [];
  const ok =
    response?.overall_code === 'OK' &&
    statuses.length === request.descriptors.length &&
    statuses.every((s) => s.code === 'OK' && s.current_limit?.requests_per_unit > 0);
  if (!ok)
    throw new Error(
      `sanity check failed: ${side} did not count every descriptor of ${JSON.stringify(request)}: ` +
        JSON.stringify(response).slice(0, 800),
    );
}

/**
 * Starts the API on `ports.http`/`ports.grpc`; the stack is `{ redisUrl, brokers }`. `build`: another
 * build's `dist` and the package.json whose start script it runs with (a baseline), else this tree's.
 */
export async function startTallyApi({ stack, settings, policies, ports, outDir, build = {} }, log) {
  const profile = process.env.BENCH_PROFILE === '1';
  const profileDir = join(outDir, 'prof-rls');
  const start = startCommand(build.packageJson);
  const nodeArgs = [...start.flags, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const env = {
    ...start.env,
    ...appEnv(stack, settings),
    TALLY_POLICIES: policies,
    TALLY_HOST: '127.0.0.1',
    TALLY_HTTP_PORT: String(ports.http),
    TALLY_GRPC_PORT: String(ports.grpc),
    TALLY_WORKERS: settings.workers,
  };
  const main = build.dist ? join(build.dist, 'apps/decision-api/src/main.js') : API_MAIN;
  const child = startProcess('decision-api', process.execPath, [...nodeArgs, main], env);
  const grpcTarget = `127.0.0.1:${ports.grpc}`;
  try {
    await waitFor(
      'decision-api',
      async () => (await fetch(`http://127.0.0.1:${ports.http}/readyz`)).ok,
      60_000,
    );
  } catch (error) {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  }
  log(
    `decision-api pid ${child.pid} (workers ${settings.workers}): http :${ports.http}, grpc :${ports.grpc}`,
  );
  return {
    pid: child.pid,
    grpcTarget,
    decisionsUrl: `http://127.0.0.1:${ports.http}/v1/decisions`,
    async stop() {
      const exit = await child.stop(20_000);
      if (exit.code !== 0) log(`decision-api exited with ${JSON.stringify(exit)}\n${child.output()}`);
      if (profile)
        log(`CPU profiles of the API in ${profileDir}: node test/bench/profile-summary.mjs <file>`);
    },
  };
}
