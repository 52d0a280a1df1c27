// Outbox entries made the way the decision API makes them: pipelined EVALSHA of the engine's own
// decide.lua (arguments built by the engine's own planning code, see decide-args.mjs), spread over
// tenants so that the relay's Kafka keys, shards and partitions spread as in production: a number of
// them at once, or a steady rate.
import { decideArgs } from './decide-args.mjs';
import { waitFor } from './processes.mjs';

/** Runs `n` allowed decisions (cost 1) of `tenants` tenants; every one appends one outbox entry. */
export async function fillOutbox(redis, engine, sha, { n, tenants, shards }) {
  const PIPELINE = 1000;
  let done = 0;
  const worker = async () => {
    while (done < n) {
      const size = Math.min(PIPELINE, n - done);
      const first = done;
      done += size;
      const pipeline = redis.pipeline();
      for (let i = first; i < first + size; i++) {
        const tenant = `t${i % tenants}`;
        pipeline.evalsha(sha, ...decideArgs(engine, { tenant, principal: `p${i % 97}`, shards }));
      }
      for (const [error, reply] of await pipeline.exec()) {
        if (error || reply[0] !== 1)
          throw new Error(`decide.lua did not allow: ${error ?? JSON.stringify(reply)}`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/**
 * Decisions at `rate` per second, pipelined from this process every 5 ms, `tenants` tenants over
 * `shards` shards, until `stop()`; `answered()` counts those Redis answered without an error (a load
 * on the relay and the broker with no decision API in the way).
 */
export function decideAtRate(redis, engine, sha, { rate, tenants, shards }) {
  let sent = 0;
  let answered = 0;
  let stopped = false;
  const started = performance.now();
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate) - sent;
      if (due > 0) {
        const pipeline = redis.pipeline();
        for (let i = sent; i < sent + due; i++)
          pipeline.evalsha(
            sha,
            ...decideArgs(engine, { tenant: `t${i % tenants}`, principal: `p${i % 97}`, shards }),
          );
        sent += due;
        void pipeline.exec().then((replies) => {
          for (const [error] of replies) if (!error) answered++;
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    answered: () => answered,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Sum of XLEN over every shard's outbox stream (one pipeline). */
export async function outboxDepth(redis, engine, shards) {
  const pipeline = redis.pipeline();
  for (const keys of engine.allShardKeys(shards)) pipeline.xlen(keys.outbox);
  let sum = 0;
  for (const [error, n] of await pipeline.exec()) {
    if (error) throw error;
    sum += n;
  }
  return sum;
}

/** Resolves once every shard's outbox stream is empty (a relay shipped them), throws after `timeoutMs`. */
export function outboxDrained(redis, engine, shards, timeoutMs = 120_000) {
  return waitFor(
    'the outbox drained by the relay',
    async () => (await outboxDepth(redis, engine, shards)) === 0,
    timeoutMs,
  );
}

/** Every outbox entry as the relay reads it (`{p, t, r}` fields), for the producer baseline. */
export async function readOutbox(redis, engine, shards) {
  const entries = [];
  for (const keys of engine.allShardKeys(shards)) {
    for (const [, fields] of await redis.xrange(keys.outbox, '-', '+')) {
      const entry = {};
      for (let i = 0; i < fields.length; i += 2) entry[fields[i]] = fields[i + 1];
      entries.push(entry);
    }
  }
  return entries;
}
