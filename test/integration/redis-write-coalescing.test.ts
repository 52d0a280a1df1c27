/**
 * The hot path's client writes the commands of one event-loop turn with one socket write per
 * connection, keeps them all in flight, answers each in order, and fails them when the connection
 * dies. Real: a redis-server of this file alone (its INFO read counters must see no other client),
 * spawned and killed here by its pid; the Cluster case lives in cluster.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { eventually, freePort } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  readonly dir: string;
}
const servers: Server[] = [];
const clients: RedisClient[] = [];

async function startServer(): Promise<Server> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tally-coalescing-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' });
  const server = { url: `redis://127.0.0.1:${port}`, child, dir };
  servers.push(server);
  return server;
}

/** The hot path's client, once ready (it has no offline queue). */
async function hotPathClient(url: string): Promise<Redis> {
  const client = createRedisClient({ mode: 'single', url }, 'hot-path') as Redis;
  client.on('error', () => undefined);
  clients.push(client);
  await eventually(
    () => client.status,
    (s) => s === 'ready',
    { timeoutMs: 10_000, intervalMs: 20, what: 'client ready' },
  );
  return client;
}

/** Calls of the socket's write methods (each one hands the kernel one write or writev). */
function countWrites(client: Redis): () => number {
  const socket = client.stream as Socket & {
    _write: (...a: unknown[]) => void;
    _writev: (...a: unknown[]) => void;
  };
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...a: unknown[]) => {
      writes++;
      original(...a);
    };
  }
  return () => writes;
}

const readsProcessed = async (observer: Redis): Promise<number> =>
  Number(/total_reads_processed:(\d+)/.exec(await observer.info('stats'))?.[1]);

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    rmSync(server.dir, { recursive: true, force: true });
  }
});

describe('write coalescing of the hot-path client', () => {
  it('sends the commands of one turn in one socket write and answers each, in order', async () => {
    const server = await startServer();
    const sut = await hotPathClient(server.url);
    const observer = new Redis(server.url);
    clients.push(observer);
    const writes = countWrites(sut);
    const readsBefore = await readsProcessed(observer);

    // when: 200 commands issued in one turn, interleaving two kinds
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) pending.push(sut.incr('coalesced'), sut.echo(`m${i}`));
    const replies = await Promise.all(pending);

    // then: one write left this client and the server read them at once (the +1 is the observer's INFO)
    expect(writes()).toBe(1);
    expect((await readsProcessed(observer)) - readsBefore).toBe(2);
    expect(replies).toEqual(Array.from({ length: 100 }, (_, i) => [i + 1, `m${i}`]).flat());
  });

  it('keeps every command in flight: a turn that awaits earlier answers gets its own write', async () => {
    const server = await startServer();
    const sut = await hotPathClient(server.url);
    const writes = countWrites(sut);

    const first = await Promise.all([sut.incr('turns'), sut.incr('turns')]);
    const second = await Promise.all([sut.incr('turns'), sut.incr('turns'), sut.incr('turns')]);

    expect([first, second]).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    expect(writes()).toBe(2);
  });

  it('given the server dies in the turn its commands were issued, fails them all promptly', async () => {
    const server = await startServer();
    const sut = await hotPathClient(server.url);
    const startedAt = performance.now();

    const pending = Array.from({ length: 100 }, (_, i) => sut.echo(`lost${i}`));
    server.child.kill('SIGKILL');
    const settled = await Promise.allSettled(pending);

    expect(settled.filter((s) => s.status === 'fulfilled')).toEqual([]);
    // ioredis gives up after one reconnect attempt (maxRetriesPerRequest 1): well under a second
    expect(performance.now() - startedAt).toBeLessThan(2_000);
  });
});
