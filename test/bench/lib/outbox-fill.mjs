// Outbox entries made the way the decision API makes them: pipelined EVALSHA of the engine's own
// decide.lua (arguments built by the engine's own planning code, see decide-args.mjs), spread over
// tenants so that the relay's Kafka keys, shards and partitions spread as in production.
import { decideArgs } from './decide-args.mjs';

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
