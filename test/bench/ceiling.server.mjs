// The ceiling: a bare Fastify server (the app's Fastify version, the engine's Redis client settings)
// whose only work per request is ONE EVALSHA of the real decide.lua with two-window arguments
// (planned by the engine's own code, minus the policy match: see decide-args.mjs).
// Whatever the decision API does beyond this is the cost being measured.
// Env: BENCH_PORT, BENCH_REDIS_URL, BENCH_SHARDS.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { decideLua, hotPathRedis, loadEngine, ROOT } from './lib/built.mjs';
import { decideArgs } from './lib/decide-args.mjs';

const Fastify = createRequire(join(ROOT, 'package.json'))('fastify');
const engine = loadEngine();
const shards = Number(process.env.BENCH_SHARDS ?? 64);
const redis = hotPathRedis(process.env.BENCH_REDIS_URL);
await new Promise((resolve, reject) => {
  redis.once('ready', resolve);
  redis.once('error', reject);
});
const sha = await redis.script('LOAD', decideLua());

// Same body limit as the app's default (TALLY_BODY_LIMIT_BYTES).
const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
app.get('/healthz', async () => ({ status: 'up' }));

app.post('/v1/decisions', async (request, reply) => {
  const { tenant, principal, route } = request.body.selectors;
  const answer = await redis.evalsha(sha, ...decideArgs(engine, { tenant, principal, route, shards }));
  const allowed = answer[0] === 1;
  void reply.status(allowed ? 200 : 429);
  return { allowed, remaining: answer[5] };
});

await app.listen({ port: Number(process.env.BENCH_PORT), host: '127.0.0.1' });

const stop = () => {
  void app
    .close()
    .then(() => redis.quit())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
