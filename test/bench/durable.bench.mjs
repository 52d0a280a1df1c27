// What durable mode costs on the hot path (issue 11): the decision API against a private master +
// replica pair, once with async replication (TALLY_REDIS_WAIT_REPLICAS=0) and once answering only
// after the replica acknowledged (=1, WAIT pipelined with the script), same load, both APIs up side
// by side. BENCH_ROUNDS rounds alternate which side runs first; a ratio is taken within each round
// and the headline is the median; absolute figures are means. Every measurement starts empty.
// Settings (env): BENCH_CONNECTIONS (64), BENCH_WARMUP (3 s), BENCH_DURATION (10 s), BENCH_ROUNDS (3),
// BENCH_REDIS_PORT (6397: the master; the replica takes the next port),
// BENCH_WAIT_TIMEOUT_MS (the durable API's TALLY_REDIS_WAIT_TIMEOUT_MS, default 100).
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib/built.mjs';
import { measureHttp, round } from './lib/load.mjs';
import { startRedisPair } from './lib/redis-pair.mjs';
import { meanOf, writeJson } from './lib/report.mjs';
import { AUTH, singleBody, startApi } from './lib/servers.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);

const settings = {
  connections: int('BENCH_CONNECTIONS', 64),
  pipelining: 1,
  warmupSeconds: int('BENCH_WARMUP', 3),
  durationSeconds: int('BENCH_DURATION', 10),
  rounds: int('BENCH_ROUNDS', 3),
  waitTimeoutMs: int('BENCH_WAIT_TIMEOUT_MS', 100),
  batchSize: 100,
  shards: 64,
  cpus: availableParallelism(),
  node: process.version,
};

const log = (line) => process.stdout.write(`[bench durable] ${line}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runDurableBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const store = await startRedisPair(int('BENCH_REDIS_PORT', 6397), log);
  const servers = [];
  try {
    const asyncApi = await startApi(store, settings, OUT_DIR, log);
    servers.push(asyncApi);
    const durableApi = await startApi(store, settings, OUT_DIR, log, {
      TALLY_REDIS_WAIT_REPLICAS: '1',
      TALLY_REDIS_WAIT_TIMEOUT_MS: String(settings.waitTimeoutMs),
    });
    servers.push(durableApi);
    const measure = async (what, api) => {
      await store.flush();
      log(what);
      return measureHttp({ ...settings, url: api.decisionsUrl, body: singleBody(), headers: AUTH });
    };

    const rounds = [];
    for (let n = 0; n < settings.rounds; n++) {
      const tag = `round ${n + 1}/${settings.rounds}:`;
      const sides = [
        () => measure(`${tag} async replication`, asyncApi),
        () => measure(`${tag} durable (WAIT 1)`, durableApi),
      ];
      const [first, second] = n % 2 === 0 ? sides : sides.reverse();
      const a = await first();
      const b = await second();
      const [plain, durable] = n % 2 === 0 ? [a, b] : [b, a];
      rounds.push({ async: plain, durable });
      log(
        `${tag} async ${plain.okPerSec} req/s p99 ${plain.latencyMs.p99} ms | durable ${durable.okPerSec} req/s ` +
          `p99 ${durable.latencyMs.p99} ms | throughput ×${round(durable.okPerSec / plain.okPerSec, 3)}, ` +
          `p99 ×${round(durable.latencyMs.p99 / plain.latencyMs.p99, 3)}`,
      );
    }

    const figures = {
      async: meanOf(rounds.map((r) => r.async)),
      durable: meanOf(rounds.map((r) => r.durable)),
    };
    const ratios = {
      throughput: median(rounds.map((r) => round(r.durable.okPerSec / r.async.okPerSec, 3))),
      p99: median(rounds.map((r) => round(r.durable.latencyMs.p99 / r.async.latencyMs.p99, 3))),
    };
    const codes = { async: figures.async.codes, durable: figures.durable.codes };
    log(
      `summary (${settings.rounds} rounds, ${settings.connections} connections, ${settings.cpus} cpus): ` +
        `async ${figures.async.okPerSec} req/s p50 ${figures.async.latencyMs.p50} p99 ${figures.async.latencyMs.p99} ms; ` +
        `durable ${figures.durable.okPerSec} req/s p50 ${figures.durable.latencyMs.p50} p99 ${figures.durable.latencyMs.p99} ms; ` +
        `median ratio durable/async: throughput ×${ratios.throughput}, p99 ×${ratios.p99}; ` +
        `refusals ${JSON.stringify(codes)}`,
    );
    const out = join(OUT_DIR, 'durable.json');
    writeJson(out, { at: new Date().toISOString(), settings, ...figures, ratios, rounds });
    log(`figures written to ${out}`);
    return { ...figures, ratios };
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await store.stop();
  }
}
