/**
 * Shared by the cli*.test.ts suites: a private redis-server (the CLI writes enforcement keys and
 * projection namespaces, which must never touch the shared Redis other suites and a running projector
 * use), and runCli in-process with the io captured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runCli } from '../../apps/cli/src/cli';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface PrivateRedis {
  readonly url: string;
  readonly client: Redis;
  stop(): Promise<void>;
}

/** A redis-server of this suite on a free port, no persistence; stopped by its pid. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tally-cli-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 100 });
  // Refused connections while the server starts are expected; the loop below retries them.
  client.on('error', () => undefined);
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.connect();
      await client.ping();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    client,
    async stop() {
      client.disconnect();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `tally <argv>` in-process, as `npm run -s tally` would run it, with the given environment. */
export async function tally(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
