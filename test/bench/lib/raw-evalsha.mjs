// The batch baseline: raw ioredis, the engine's client settings, N concurrent pipelines of
// `batchSize` EVALSHAs of decide.lua each, back to back. Checks/s is what Redis + one client can do.
import { loadavg } from 'node:os';
import { decideArgs } from './decide-args.mjs';
import { latencySummary, round } from './load.mjs';

async function loop(redis, engine, sha, o, until, record) {
  while (performance.now() < until) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < o.batchSize; i++)
      pipeline.evalsha(
        sha,
        ...decideArgs(engine, { tenant: o.tenant, principal: `p${i}`, shards: o.shards }),
      );
    const started = performance.now();
    const replies = await pipeline.exec();
    record(performance.now() - started, replies);
  }
}

export async function measureRawEvalsha(redis, engine, sha, o) {
  const phase = async (seconds) => {
    const until = performance.now() + seconds * 1000;
    const latencies = [];
    let checks = 0;
    let failed = 0;
    const started = performance.now();
    const record = (ms, replies) => {
      latencies.push(ms);
      checks += replies.length;
      for (const [error, reply] of replies) if (error || reply[0] !== 1) failed++;
    };
    await Promise.all(
      Array.from({ length: o.concurrency }, () => loop(redis, engine, sha, o, until, record)),
    );
    return { checks, failed, latencies, elapsed: (performance.now() - started) / 1000 };
  };
  if (o.warmupSeconds > 0) await phase(o.warmupSeconds);
  const loadBefore = loadavg()[0];
  const r = await phase(o.durationSeconds);
  return {
    checks: r.checks,
    checksPerSec: round(r.checks / r.elapsed),
    pipelinesPerSec: round(r.latencies.length / r.elapsed),
    pipelineLatencyMs: latencySummary(r.latencies),
    failedChecks: r.failed,
    durationSeconds: round(r.elapsed, 2),
    loadAvg1m: [round(loadBefore, 2), round(loadavg()[0], 2)],
  };
}
