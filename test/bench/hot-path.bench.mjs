// The hot-path benchmark (issue 3 item 10, DESIGN §6): printed figures, not a timed test.
// One run, one load generator (autocannon, this process), one Redis, both servers up side by side:
//   ceiling  — bare Fastify + one EVALSHA of decide.lua     vs  the decision API, same load;
//   raw ioredis pipelines of EVALSHA (checks/s)             vs  POST /v1/decisions:batch.
// The machine is shared and noisy, so each pair is measured in BENCH_ROUNDS rounds whose order
// alternates (baseline first, then API first); a ratio is taken within each round (its two sides ran
// back to back) and the headline ratio is the median over the rounds, while the printed absolute
// figures are means. Every measurement starts from an empty Redis.
// Settings (env): BENCH_CONNECTIONS (64), BENCH_PIPELINING (1), BENCH_WARMUP (3 s), BENCH_DURATION
// (10 s), BENCH_ROUNDS (3), BENCH_BATCH_SIZE (100), BENCH_BATCH_CONCURRENCY (8),
// BENCH_BACKEND_TIMEOUT_MS (the API's TALLY_BACKEND_TIMEOUT_MS; default: the app's), BENCH_REDIS_PORT
// (6395: a private redis-server started and stopped here) or BENCH_REDIS_URL (an existing Redis:
// nothing is flushed and the outbox entries stay), BENCH_API_NODE_ARGS (extra node flags of the API
// child, for what-if runs), BENCH_PROFILE=1 (--cpu-prof of the API child into
// .local/bench/prof; read it with test/bench/profile-summary.mjs), BENCH_DECIDE_BASELINE (older
// decide.lua files, comma-separated, e.g. `git show <rev>:libs/engine/src/lua/decide.lua > f.lua`,
// written for one hash per window (before ADR 0008), measured in the script cost phase beside today's
// and the minimal floor, in both workloads: before/after in one run).
// Also printed: the script cost (Redis µs per decide.lua call, INFO commandstats, private Redis only:
// lib/script-cost.mjs), the API process's RSS at rest, after the load and its peak (VmHWM), and the
// memory phase (lib/memory-phase.mjs: the API with its workers, RSS per process at rest and under
// load with distinct tenants, CPU per request at a fixed rate; before/after with BENCH_BASELINE_DIST).
// `npm run bench -- memory` runs the memory phase alone. BENCH_MEMORY=0 skips it here.
// Then the tracing phase (lib/tracing-phase.mjs: CPU per decision and latency with tracing off, on at
// 1 % and at 100 %, as ratios against off in the same round). `npm run bench -- tracing` runs it
// alone; BENCH_TRACING=0 skips it here.
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { decideLua, loadEngine, ROOT } from './lib/built.mjs';
import { measureHttp, round } from './lib/load.mjs';
import { startRedis } from './lib/redis.mjs';
import { measureRawEvalsha } from './lib/raw-evalsha.mjs';
import { processMemory } from './lib/rss.mjs';
import { memoryPhase, printMemory } from './lib/memory-phase.mjs';
import { printTracing, tracingPhase } from './lib/tracing-phase.mjs';
import { FLOOR_LUA_PATH, measureScriptCost, MINIMAL_LUA_PATH } from './lib/script-cost.mjs';
import { meanOf, medianRatios, printSummary, ratios, TARGETS, verdicts, writeJson } from './lib/report.mjs';
import { AUTH, batchBody, singleBody, startApi, startCeiling, TENANT } from './lib/servers.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);

const settings = {
  connections: int('BENCH_CONNECTIONS', 64),
  pipelining: int('BENCH_PIPELINING', 1),
  warmupSeconds: int('BENCH_WARMUP', 3),
  durationSeconds: int('BENCH_DURATION', 10),
  rounds: int('BENCH_ROUNDS', 3),
  batchSize: int('BENCH_BATCH_SIZE', 100),
  batchConcurrency: int('BENCH_BATCH_CONCURRENCY', 8),
  shards: 64,
  cpus: availableParallelism(),
  node: process.version,
};

const log = (line) => process.stdout.write(`[bench] ${line}\n`);

/** Runs `a` then `b`, or `b` then `a` on odd rounds, so drift of the machine's load hits both alike. */
async function pair(n, a, b) {
  if (n % 2 === 0) return { a: await a(), b: await b() };
  const second = await b();
  return { a: await a(), b: second };
}

export async function runHotPathBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const engine = loadEngine();
  const store = await startRedis(engine, log);
  const servers = [];
  try {
    const ceiling = await startCeiling(store, settings, log);
    servers.push(ceiling);
    const api = await startApi(store, settings, OUT_DIR, log);
    servers.push(api);
    const sha = await store.redis.script('LOAD', decideLua());
    const rssAtRest = processMemory(api.pid);
    const single = singleBody();
    const batch = batchBody(settings.batchSize);
    const fresh = async (what, measure) => {
      await store.flush();
      log(what);
      return measure();
    };
    const http =
      (url, extra = {}) =>
      () =>
        measureHttp({ ...settings, url, body: single, headers: AUTH, ...extra });

    const rounds = [];
    for (let n = 0; n < settings.rounds; n++) {
      const tag = `round ${n + 1}/${settings.rounds}:`;
      const hot = await pair(
        n,
        () => fresh(`${tag} ceiling`, http(ceiling.decisionsUrl)),
        () => fresh(`${tag} decision API`, http(api.decisionsUrl)),
      );
      const many = await pair(
        n,
        () =>
          fresh(`${tag} raw EVALSHA pipelines`, () =>
            measureRawEvalsha(store.redis, engine, sha, {
              ...settings,
              concurrency: settings.batchConcurrency,
              tenant: TENANT,
            }),
          ),
        () =>
          fresh(`${tag} batch endpoint`, async () => {
            const m = await http(api.batchUrl, { connections: settings.batchConcurrency, body: batch })();
            // Only decisions that were answered count: a 200 call can carry refused/failed results.
            const refused = Object.values(m.codes).reduce((a, b) => a + b, 0);
            const checksPerSec = round((m.ok * settings.batchSize - refused) / m.durationSeconds);
            return { ...m, checksPerSec };
          }),
      );
      rounds.push({ ceiling: hot.a, api: hot.b, batch: { raw: many.a, api: many.b } });
    }

    const rssAfterLoad = processMemory(api.pid);
    const scriptCost = store.private ? await scriptCostPhase(store.redis, engine) : undefined;
    for (const server of servers.splice(0).reverse()) await server.stop();
    const memory =
      process.env.BENCH_MEMORY === '0' ? undefined : await memoryPhase(store, settings, OUT_DIR, log);
    const tracing =
      process.env.BENCH_TRACING === '0' ? undefined : await tracingPhase(store, settings, OUT_DIR, log);
    const figures = {
      settings,
      scriptCost,
      memory,
      tracing,
      apiMemoryMb: { atRest: rssAtRest, afterLoad: rssAfterLoad },
      ceiling: meanOf(rounds.map((r) => r.ceiling)),
      api: meanOf(rounds.map((r) => r.api)),
      batch: {
        raw: meanOf(rounds.map((r) => r.batch.raw)),
        api: meanOf(rounds.map((r) => r.batch.api)),
      },
    };
    const perRound = rounds.map((x) => ratios(x));
    const r = medianRatios(perRound);
    const v = verdicts(r);
    printSummary(figures, r, v, perRound);
    printMemoryAndScript(figures);
    if (memory) printMemory(memory);
    if (tracing) printTracing(tracing, log);
    const out = join(OUT_DIR, 'hot-path.json');
    writeJson(out, {
      at: new Date().toISOString(),
      redis: store.private ? 'private redis-server' : store.url,
      ...figures,
      ratios: r,
      ratiosPerRound: perRound,
      targets: TARGETS,
      met: v,
      rounds,
    });
    log(`figures written to ${out}`);
    return { ...figures, ratios: r, met: v };
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await store.stop();
  }
}

/** The tracing phase alone (`npm run bench -- tracing`): its own Redis, no other phase. */
export async function runTracingBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const store = await startRedis(loadEngine(), log);
  try {
    const tracing = await tracingPhase(store, settings, OUT_DIR, log);
    printTracing(tracing, log);
    const out = join(OUT_DIR, 'tracing.json');
    writeJson(out, { at: new Date().toISOString(), ...tracing });
    log(`figures written to ${out}`);
    return tracing;
  } finally {
    await store.stop();
  }
}

/** The memory phase alone (`npm run bench -- memory`): its own Redis, no other phase. */
export async function runMemoryBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const store = await startRedis(loadEngine(), log);
  try {
    const memory = await memoryPhase(store, settings, OUT_DIR, log);
    printMemory(memory);
    const out = join(OUT_DIR, 'memory.json');
    writeJson(out, { at: new Date().toISOString(), settings, memory });
    log(`figures written to ${out}`);
    return memory;
  } finally {
    await store.stop();
  }
}

export async function scriptCostPhase(redis, engine) {
  // Three workloads (lib/script-cost.mjs): `reused` principals, a `fresh` one on every call, and
  // `denied` (limits of 1). The minimal floor and a baseline take the layout they were written for
  // (one hash per window).
  const scripts = [
    { name: 'decide.lua', lua: decideLua() },
    { name: 'decide.lua, fresh keys', lua: decideLua(), fresh: true },
    { name: 'decide.lua, denied', lua: decideLua(), denied: true },
    { name: 'decide.lua + a concurrency window', lua: decideLua(), concurrency: true },
    { name: 'decide.lua, every key overridden', lua: decideLua(), overrides: true },
    { name: 'minimal two windows + outbox', path: MINIMAL_LUA_PATH, perWindow: true },
    { name: 'floor: its commands, no other Lua', path: FLOOR_LUA_PATH, legacy: true },
  ];
  // BENCH_DECIDE_BASELINE: older decide.lua files, comma-separated, each in the three workloads.
  const baselines = (process.env.BENCH_DECIDE_BASELINE ?? '').split(',').filter((f) => f !== '');
  for (const path of baselines.reverse())
    scripts.unshift(
      { name: `baseline ${path}`, path, perWindow: true },
      { name: `baseline ${path}, fresh keys`, path, perWindow: true, fresh: true },
      { name: `baseline ${path}, denied`, path, perWindow: true, denied: true },
    );
  log('script cost: INFO commandstats, interleaved slices');
  return measureScriptCost(redis, engine, scripts);
}

/**
 * `npm run bench -- script-cost`: the script cost phase alone, on a private Redis (BENCH_REDIS_PORT),
 * without the HTTP rounds: for a change of decide.lua, in a minute.
 */
export async function runScriptCostBench() {
  const engine = loadEngine();
  const store = await startRedis(engine, log);
  try {
    if (!store.private) throw new Error('the script cost needs a private Redis (unset BENCH_REDIS_URL)');
    const scriptCost = await scriptCostPhase(store.redis, engine);
    printScriptCost(scriptCost);
    return { scriptCost };
  } finally {
    await store.stop();
  }
}

function printScriptCost(scriptCost) {
  const lines = ['Redis µs per call (INFO commandstats; min / median of the slices):'];
  for (const s of scriptCost)
    lines.push(
      `  ${s.name.padEnd(48)} EVALSHA ${s.evalsha.min} / ${s.evalsha.median}   its XADD ${s.xadd.min} / ${s.xadd.median}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
}

function printMemoryAndScript(figures) {
  const { atRest, afterLoad } = figures.apiMemoryMb;
  const lines = [
    '',
    `decision API RSS: ${atRest.rss} MB at rest, ${afterLoad.rss} MB after the load, peak ${afterLoad.peak} MB`,
  ];
  if (figures.scriptCost) {
    lines.push('Redis µs per call (INFO commandstats; min / median of the slices):');
    for (const s of figures.scriptCost)
      lines.push(
        `  ${s.name.padEnd(48)} EVALSHA ${s.evalsha.min} / ${s.evalsha.median}   its XADD ${s.xadd.min} / ${s.xadd.median}`,
      );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
