/**
 * A Redis process crash (SIGKILL) and restart from its append-only file, under traffic, with
 * `appendfsync always` and `everysec`. Real: a private redis-server this file starts, kills and
 * restarts by its own pid (a free port, a directory of its own), the engine and decide.lua. Counts
 * the decisions answered allowed from Redis whose outbox entry or window units are missing after
 * the restart (docs/scaling.md quotes the printed lines). A process crash leaves what Redis wrote
 * in the OS page cache, so it cannot show what a machine crash loses between fsyncs: the test
 * asserts 0 lost for `always` (fsync before the reply) and only measures `everysec`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecisionService, EngineService, type EngineOptions } from '@tally/engine';
import { createRedisClient } from '@tally/redis';
import { freePort, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  Traffic,
  acknowledged,
  failModePolicies,
  outboxIds,
  stateAfterFault,
} from './redis-failover.harness';

/** A free port, picked in beforeAll: never a fixed one another suite may hold. */
let PORT = 0;
const SHARDS = 64;
const LIMIT = 1_000_000_000;
let url = '';

function startServer(dir: string, fsync: string): ChildProcess {
  const args = ['--port', String(PORT), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  return spawn('redis-server', [...args, '--appendonly', 'yes', '--appendfsync', fsync], { stdio: 'ignore' });
}

/** Until the server answers PING with its data set loaded (a restart replays the AOF first). */
async function ready(): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  const deadline = performance.now() + 30_000;
  try {
    for (;;) {
      try {
        if (probe.status !== 'ready') await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        // not up, or LOADING
      }
      if (performance.now() > deadline) throw new Error(`redis-server on ${PORT} not ready within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    probe.disconnect();
  }
}

const kill = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('Redis restart from the AOF after a SIGKILL', () => {
  beforeAll(async () => {
    PORT = await freePort();
    url = `redis://127.0.0.1:${PORT}`;
  });

  let server: ChildProcess | undefined;
  let dir: string | undefined;
  const engines: EngineService[] = [];

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.onModuleDestroy()));
    if (server) await kill(server);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['always', 'everysec'])(
    'appendfsync %s: acknowledged decisions kept across the restart',
    async (fsync) => {
      // given: a Redis with the AOF on, and traffic on it
      dir = mkdtempSync(join(tmpdir(), 'tally-aof-'));
      server = startServer(dir, fsync);
      await ready();
      const { set, names } = failModePolicies(LIMIT);
      const options: EngineOptions = {
        redis: { mode: 'single', url },
        shards: SHARDS,
        backendTimeoutMs: 500,
        idempotencyTtlMs: 60_000,
        tokenSecret: 'aof-secret-0123456789',
      };
      const engine = new EngineService(createRedisClient(options.redis, 'hot-path'), options);
      await engine.onModuleInit();
      engines.push(engine);
      const sut = new DecisionService(engine, { current: set }, options);
      const tenants = Array.from({ length: 8 }, () => uniqueName('t'));
      const traffic = new Traffic(sut, tenants, 32);
      await traffic.until(
        '2000 acknowledged decisions',
        () => traffic.sent.filter(acknowledged).length >= 2000,
      );

      // when: the process dies mid-traffic and restarts from its AOF
      await kill(server);
      await traffic.stop();
      server = startServer(dir, fsync);
      await ready();

      // then: every decision Redis answered allowed is still there, outbox entry and window units
      const reader = new Redis(url);
      const ids = await outboxIds(reader, SHARDS);
      await reader.quit();
      const acked = traffic.sent.filter(acknowledged);
      const lost = acked.filter((s) => !ids.has(s.decision.decision_id));
      let lostUnits = 0;
      for (const tenant of tenants) {
        for (const [i, mode] of (['open', 'closed'] as const).entries()) {
          const state = await stateAfterFault(sut, names[i], { tenant, principal: tenant });
          const answered = acked.filter((s) => s.tenant === tenant && s.mode === mode).length;
          lostUnits += Math.max(0, answered - (LIMIT - state.windows[0].remaining));
        }
      }
      console.log(
        `[aof] appendfsync ${fsync}: SIGKILL after ${acked.length} acknowledged decisions; restart from the AOF; ` +
          `lost acknowledged: ${lost.length} outbox entries, ${lostUnits} window units`,
      );
      if (fsync === 'always') expect([lost.length, lostUnits]).toEqual([0, 0]);
      expect(ids.size).toBeGreaterThan(0);
    },
    120_000,
  );
});
