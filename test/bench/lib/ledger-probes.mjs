// What the ledger bench watches while the pipeline runs: a drain's rate, the outbox depth over time,
// and decision → projection lag of marker decisions (each of its own tenant, so its first usage row
// in the projection is exactly that decision arriving).
import { round } from './load.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `read()` (work done so far, out of `total`) until it reaches `total`. The rate runs from the
 * first poll that saw progress: a process's boot and group join are not its throughput.
 */
export async function watchProgress(read, total, { pollMs = 50, timeoutMs = 600_000 } = {}) {
  const deadline = performance.now() + timeoutMs;
  const start = await read();
  let t0 = 0;
  let done0 = start;
  for (;;) {
    const done = await read();
    const now = performance.now();
    if (t0 === 0 && done > start) {
      t0 = now;
      done0 = done;
    }
    if (done >= total) {
      const seconds = (now - t0) / 1000;
      return { total, seconds: round(seconds, 3), perSec: Math.round((total - done0) / seconds) };
    }
    if (now > deadline) throw new Error(`no drain within ${timeoutMs} ms: ${done}/${total}`);
    await sleep(pollMs);
  }
}

/** Samples `read()` every `everyMs` until `stop()`; samples are [seconds since start, value]. */
export function sampleEvery(read, everyMs) {
  const samples = [];
  const started = performance.now();
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = performance.now();
      samples.push([round((at - started) / 1000, 3), await read()]);
      await sleep(Math.max(0, everyMs - (performance.now() - at)));
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Least-squares slope of value over time (units per second). */
export function slope(samples) {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((a, [x]) => a + x, 0) / n;
  const my = samples.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of samples) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Every `everyMs`, one decision of a fresh tenant; each answered one is then looked for in the
 * projection every `pollMs` (`seen(tenant)`) until found. Lag = found − answered, so it covers
 * outbox → relay → Kafka → projector → Redis, not the API's own latency.
 */
export function lagProbe({ decide, seen, everyMs = 100, pollMs = 10, tenantPrefix }) {
  const pending = new Map();
  const lags = [];
  const failures = [];
  let sent = 0;
  let running = true;
  const send = (async () => {
    while (running) {
      const tenant = `${tenantPrefix}${sent++}`;
      const at = performance.now();
      decide(tenant).then(
        (ok) => (ok ? pending.set(tenant, performance.now()) : failures.push(tenant)),
        () => failures.push(tenant),
      );
      await sleep(Math.max(0, everyMs - (performance.now() - at)));
    }
  })();
  const poll = (async () => {
    while (running || pending.size > 0) {
      const tenants = [...pending.keys()];
      if (tenants.length > 0) {
        const found = await seen(tenants);
        const now = performance.now();
        tenants.forEach((tenant, i) => {
          if (!found[i]) return;
          lags.push(now - pending.get(tenant));
          pending.delete(tenant);
        });
      }
      await sleep(pollMs);
    }
  })();
  return {
    /** Stops sending, waits up to `graceMs` for the decisions in flight to arrive. */
    async stop(graceMs = 30_000) {
      running = false;
      await send;
      const deadline = performance.now() + graceMs;
      while (pending.size > 0 && performance.now() < deadline) await sleep(50);
      const lost = pending.size;
      pending.clear();
      await poll;
      return { sent, arrived: lags.length, lost, failed: failures.length, lagsMs: lags };
    },
  };
}

/**
 * `seen` of `lagProbe` for the projector's usage rows: `(tenants) => booleans`, a tenant seen when
 * any shard of `namespace` holds its day row (its usage is in the shard of its partition).
 * `namespaces`: the built tree's ProjectionNamespaces on `redis`.
 */
export function projectionSeen(redis, namespaces, namespace) {
  return async (tenants) => {
    const shards = await namespaces.shardKeys(namespace);
    const pipeline = redis.pipeline();
    for (const t of tenants)
      for (const keys of shards) pipeline.hexists(keys.usage(t, 'day', Date.now()), 'count:_all');
    const found = (await pipeline.exec()).map(([error, hit]) => !error && hit === 1);
    return tenants.map((_, i) => found.slice(i * shards.length, (i + 1) * shards.length).some(Boolean));
  };
}
