// The Redis of the run: by default a private redis-server (no persistence) on BENCH_REDIS_PORT,
// started and stopped here by pid, so the bench neither fills the shared Redis's outbox streams (a
// running relay would ship them to Kafka) nor measures other engineers' traffic.
import { hotPathRedis } from './built.mjs';
import { startProcess, waitFor } from './processes.mjs';

async function connect(engine, url) {
  // The engine's own client settings (no offline queue, no auto-pipelining): what the API runs with.
  const redis = hotPathRedis(url);
  await waitFor(`Redis at ${url}`, () => redis.status === 'ready', 10_000);
  return redis;
}

export async function startRedis(engine, log) {
  if (process.env.BENCH_REDIS_URL) {
    const url = process.env.BENCH_REDIS_URL;
    log(`using ${url}: nothing is flushed between measurements`);
    const redis = await connect(engine, url);
    return {
      url,
      redis,
      private: false,
      flush: async () => {},
      stop: () => redis.quit().catch(() => redis.disconnect()),
    };
  }
  const port = Number.parseInt(process.env.BENCH_REDIS_PORT ?? '6395', 10);
  const server = startProcess('redis-server', 'redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitFor('redis-server', () => server.alive() && /Ready to accept/.test(server.output()), 10_000);
  } catch (error) {
    await server.stop();
    throw new Error(`${error.message} (port ${port} busy? set BENCH_REDIS_PORT)\n${server.output()}`);
  }
  log(`redis-server pid ${server.pid} on ${url}`);
  const redis = await connect(engine, url);
  return {
    url,
    redis,
    private: true,
    // Each measurement starts empty: outbox streams of earlier ones would only cost memory.
    flush: () => redis.flushall(),
    stop: async () => {
      await redis.quit().catch(() => redis.disconnect());
      await server.stop();
    },
  };
}
