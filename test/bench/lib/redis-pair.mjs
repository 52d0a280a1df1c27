// A private master + replica pair of redis-servers (no persistence), started and stopped here by pid:
// the topology durable mode needs (WAIT 1 is answered by the replica).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hotPathRedis, ROOT } from './built.mjs';
import { startProcess, waitFor } from './processes.mjs';

function startServer(name, port, extra) {
  // A replica's full sync writes the received RDB to its dir: keep it out of the working tree.
  const dir = join(ROOT, '.local/bench/redis-pair', String(port));
  mkdirSync(dir, { recursive: true });
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    ...extra,
  ];
  return startProcess(name, 'redis-server', args);
}

async function ready(server, port) {
  try {
    await waitFor(server.name, () => server.alive() && /Ready to accept/.test(server.output()), 10_000);
  } catch (error) {
    throw new Error(`${error.message} (port ${port} busy? set BENCH_REDIS_PORT)\n${server.output()}`);
  }
}

/** Master on `port`, replica on `port + 1`; resolves once the replica's link is up. */
export async function startRedisPair(port, log) {
  const servers = [];
  const stop = async () => {
    for (const s of servers.reverse()) await s.stop();
  };
  try {
    servers.push(startServer('redis master', port, []));
    await ready(servers[0], port);
    servers.push(startServer('redis replica', port + 1, ['--replicaof', '127.0.0.1', String(port)]));
    await ready(servers[1], port + 1);
    const url = `redis://127.0.0.1:${port}`;
    const redis = hotPathRedis(url);
    const replica = hotPathRedis(`redis://127.0.0.1:${port + 1}`);
    await waitFor(
      'replica in sync',
      async () => /master_link_status:up/.test(await replica.info('replication')),
      20_000,
    );
    await replica.quit();
    log(`redis master pid ${servers[0].pid} on ${url}, replica pid ${servers[1].pid} on port ${port + 1}`);
    return {
      url,
      redis,
      private: true,
      // Each measurement starts empty (FLUSHALL replicates: the replica empties too).
      flush: () => redis.flushall(),
      stop: async () => {
        await redis.quit().catch(() => redis.disconnect());
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
