// The sides the RLS benches put side by side, started the same way by each bench: Tally (the built
// decision API on a private stack, its relay shipping to the stack's broker unless told otherwise),
// envoyproxy/ratelimit on a redis-server of its own, and for the steady bench the floor and the
// contract's floor (floor.server.mjs); each side is checked to count every descriptor of a call,
// over gRPC and over HTTP, before any figure is taken.
// A side: `{ name, roots, ledger, redis, grpcTarget, metadata, httpUrl, httpHeaders, httpBody,
// label, pids }` — `roots` the server's pids (workers are found as their children), `ledger` the
// ledger's pids (relay, broker), `redis` an ioredis client of the side's Redis, `pids` each process
// by role (what the steady bench reads apart).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { hotPathRedis, ROOT } from './built.mjs';
import { startRelay } from './ledger-apps.mjs';
import { freePort, startProcess, waitFor } from './processes.mjs';
import { descriptors, GRPC_DOMAIN, HTTP_DOMAIN } from './rls-configs.mjs';
import { startPeer, startPlainRedis } from './rls-peer.mjs';
import { expectCounted, rlsCall, startTallyApi, TALLY_AUTH } from './rls-tally.mjs';
import { startCommand } from './servers.mjs';

/** `count` ports from BENCH_PORT_BASE + `offset` (a machine where ports are assigned), else free ones. */
export async function portsFrom(offset, count) {
  const base = Number.parseInt(process.env.BENCH_PORT_BASE ?? '', 10);
  const ports = [];
  for (let i = 0; i < count; i++) ports.push(Number.isInteger(base) ? base + offset + i : await freePort());
  return ports;
}

/** An ioredis client of `url`, ready, closed by `cleanup`. */
async function redisClient(what, url, cleanup) {
  const client = hotPathRedis(url);
  cleanup.push(() => client.quit().catch(() => client.disconnect()));
  await waitFor(what, () => client.status === 'ready', 10_000);
  return client;
}

async function redisPid(client) {
  return Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
}

/** Where the load generators send a Tally API's calls, and what they send (a new tenant per call). */
export function tallyTargets(api) {
  return {
    grpcTarget: api.grpcTarget,
    metadata: TALLY_AUTH,
    httpUrl: api.decisionsUrl,
    httpHeaders: TALLY_AUTH,
    httpBody: (tenant) =>
      JSON.stringify({ selectors: { tenant }, attributes: { domain: HTTP_DOMAIN }, cost: 1 }),
  };
}

/**
 * Tally on `stack` with the policies of `configs`; ports from BENCH_PORT_BASE + 10..12 (a baseline's
 * + 20..22). `relay`: false = the outbox is written, not shipped. `build`: `{ dist, packageJson }` of
 * another build, measured as side `baseline`. Every process it starts is stopped by `cleanup`.
 */
export async function startTallySide({ stack, settings, configs, outDir, relay, build }, log, cleanup) {
  const [http, grpc, relayPort] = await portsFrom(build ? 20 : 10, 3);
  const api = await startTallyApi(
    { stack, settings, policies: configs.policies, ports: { http, grpc }, outDir, build },
    log,
  );
  cleanup.push(() => api.stop());
  const broker = Number(readFileSync(join(stack.dir, 'kafka.pid'), 'utf8').trim());
  const pids = { api: api.pid, broker, relay: null, relayMetricsUrl: null };
  if (relay) {
    const app = await startRelay(stack, settings, log, relayPort, build?.dist);
    cleanup.push(() => app.stop());
    pids.relay = app.pid;
    pids.relayMetricsUrl = `http://127.0.0.1:${app.port}/metrics`;
  } else log('no relay: the outbox is written, not shipped');
  const redis = await redisClient('Tally Redis client', stack.redisUrl, cleanup);
  pids.redis = await redisPid(redis);
  return {
    name: build ? 'baseline' : 'tally',
    roots: [api.pid],
    ledger: pids.relay === null ? [] : [pids.relay, broker],
    redis,
    redisUrl: stack.redisUrl,
    pids,
    ...tallyTargets(api),
    label: (pid) => (pid === api.pid ? 'decision-api primary' : 'decision-api worker'),
  };
}

/** The peer's `POST /json` body for one tenant (the floor takes the same). */
const peerHttpBody = (tenant) =>
  JSON.stringify({ domain: HTTP_DOMAIN, descriptors: [{ entries: [{ key: 'tenant', value: tenant }] }] });

/** envoyproxy/ratelimit (`bin`) and its redis-server; ports from BENCH_PORT_BASE + 0..3. */
export async function startPeerSide({ bin, configs }, log, cleanup) {
  const [http, grpc, debug, redisPort] = await portsFrom(0, 4);
  const peerRedis = await startPlainRedis('peer redis-server', redisPort, log);
  cleanup.push(() => peerRedis.stop());
  const peer = await startPeer(
    { bin, runtimeRoot: configs.runtimeRoot, redisPort, ports: { http, grpc, debug } },
    log,
  );
  cleanup.push(() => peer.stop());
  const redis = await redisClient('peer Redis client', peerRedis.url, cleanup);
  return {
    name: 'peer',
    roots: [peer.pid],
    ledger: [],
    redis,
    pids: { api: peer.pid, redis: peerRedis.pid },
    grpcTarget: peer.grpcTarget,
    metadata: undefined,
    httpUrl: peer.jsonUrl,
    httpHeaders: {},
    httpBody: peerHttpBody,
    label: () => 'ratelimit',
  };
}

/**
 * The floor (test/bench/floor.server.mjs): the peer's work on the API's stack (Node with the start
 * script's flags, as many workers as Tally's API, Fastify, node:http2, the engine's Redis client) on a
 * redis-server of its own; ports from BENCH_PORT_BASE + 30..32.
 */
export async function startFloorSide({ settings }, log, cleanup) {
  const [http, grpc, redisPort] = await portsFrom(30, 3);
  const floorRedis = await startPlainRedis('floor redis-server', redisPort, log);
  cleanup.push(() => floorRedis.stop());
  const server = await startFloorServer(
    'floor',
    { http, grpc, redisUrl: floorRedis.url, settings },
    log,
    cleanup,
  );
  const redis = await redisClient('floor Redis client', floorRedis.url, cleanup);
  return {
    name: 'floor',
    roots: [server.pid],
    ledger: [],
    redis,
    pids: { api: server.pid, redis: floorRedis.pid },
    ...floorTargets(http, grpc),
    label: (pid) => (pid === server.pid ? 'floor primary' : 'floor worker'),
  };
}

/**
 * The floor of the contract (floor.server.mjs with a policy file): the floor's server making, per
 * descriptor, the API's atomic step (decide.lua) on `tally`'s Redis, whose relay ships its outbox
 * entries to the stack's broker; ports from BENCH_PORT_BASE + 33..34.
 */
export async function startContractSide({ settings, configs, tally }, log, cleanup) {
  const [http, grpc] = await portsFrom(33, 2);
  const server = await startFloorServer(
    'contract',
    { http, grpc, redisUrl: tally.redisUrl, settings, policies: configs.policies },
    log,
    cleanup,
  );
  return {
    name: 'contract',
    // The relay the ledger control runs for it: the Tally side's, on the same Redis and broker.
    relayOf: 'tally',
    roots: [server.pid],
    ledger: tally.ledger,
    redis: tally.redis,
    pids: { ...tally.pids, api: server.pid },
    ...floorTargets(http, grpc),
    label: (pid) => (pid === server.pid ? 'contract primary' : 'contract worker'),
  };
}

const floorTargets = (http, grpc) => ({
  grpcTarget: `127.0.0.1:${grpc}`,
  metadata: undefined,
  httpUrl: `http://127.0.0.1:${http}/json`,
  httpHeaders: {},
  httpBody: peerHttpBody,
});

/** floor.server.mjs, started as the API is (its flags, its workers), ready when every worker listens. */
async function startFloorServer(name, { http, grpc, redisUrl, settings, policies }, log, cleanup) {
  const start = startCommand();
  const server = startProcess(
    name,
    process.execPath,
    [...start.flags, join(ROOT, 'test/bench/floor.server.mjs')],
    {
      ...start.env,
      BENCH_FLOOR_HTTP_PORT: String(http),
      BENCH_FLOOR_GRPC_PORT: String(grpc),
      BENCH_FLOOR_REDIS_URL: redisUrl,
      BENCH_FLOOR_WORKERS: String(settings.workers),
      ...(policies ? { BENCH_FLOOR_POLICIES: policies, BENCH_FLOOR_SHARDS: String(settings.shards) } : {}),
    },
  );
  cleanup.push(() => server.stop());
  const workers = settings.workers === 'auto' ? availableParallelism() : Number(settings.workers);
  try {
    await waitFor(
      name,
      () => (server.output().match(/floor worker \d+ listening/g) ?? []).length >= workers,
      30_000,
    );
  } catch (error) {
    throw new Error(`${error.message}\n${server.output()}`);
  }
  log(`${name} pid ${server.pid} (workers ${workers}): http :${http}, grpc :${grpc}`);
  return server;
}

/** Both sides must count every descriptor by a rule before any figure is taken. */
export async function checkSides(sides) {
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
}
