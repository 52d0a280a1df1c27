import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './eventually';
import { freePort } from './free-port';

/** A fresh server answers within milliseconds; ten seconds covers a busy shared machine. */
const READY_TIMEOUT_MS = 10_000;
/** SIGTERM first (a clean shutdown); a server still alive after this long gets SIGKILL. */
const STOP_GRACE_MS = 5_000;

/**
 * A redis-server of one suite alone, on a free loopback port, without persistence, for suites whose
 * key names are fixed (outbox streams), that stop, pause or restart the server, or that must never
 * touch the shared Redis other engineers use. Signals go to its own pid only, never by name.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private dir: string | undefined;
  private ownClient: Redis | undefined;

  private constructor(readonly port: number) {}

  /** `redis-server --port <free> --save '' --appendonly no`, resolved once it answers PING. */
  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.launch();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** A client of this server, made on first use; `stop` disconnects it. */
  get client(): Redis {
    this.ownClient ??= new Redis(this.url);
    return this.ownClient;
  }

  /**
   * Starts an empty server on the same port after `stop` (clients that point at `url` reconnect to
   * it): what a Redis restart without persistence looks like to the engine.
   */
  async restart(): Promise<void> {
    if (this.running()) throw new Error(`redis-server on port ${this.port} is still running`);
    await this.launch();
  }

  /** SIGSTOP: the server keeps its connections but answers nothing (a hung backend). */
  pause(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT after `pause`: the commands that waited run now. */
  resume(): void {
    this.signal('SIGCONT');
  }

  /** SIGTERM by pid, SIGKILL if it is still alive after a grace period; resolves once it has exited. */
  async stop(): Promise<void> {
    this.ownClient?.disconnect();
    this.ownClient = undefined;
    const child = this.child;
    if (child !== undefined && this.running()) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // A paused server would hold SIGTERM until it runs again.
      this.signal('SIGCONT');
      this.signal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace over'>((resolve) => {
        timer = setTimeout(() => resolve('grace over'), STOP_GRACE_MS);
      });
      if ((await Promise.race([exited, graceOver])) === 'grace over') {
        this.signal('SIGKILL');
        await exited;
      }
      clearTimeout(timer);
    }
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  /** Spawns the server and waits for its PONG; a server that never answers is stopped again. */
  private async launch(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'tally-private-redis-'));
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn('redis-server', [...args, '--dir', this.dir], { stdio: 'ignore' });
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    this.child = child;
    const answers = async (): Promise<boolean> => {
      if (spawnError !== undefined) throw spawnError;
      if (!this.running()) throw new Error(`redis-server on port ${this.port} exited before answering`);
      return ping(this.url);
    };
    try {
      await eventually(answers, (ok) => ok, {
        timeoutMs: READY_TIMEOUT_MS,
        intervalMs: 50,
        what: `redis-server on port ${this.port}`,
      });
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  private running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined || !this.running()) return;
    try {
      process.kill(pid, signal);
    } catch (error) {
      // ESRCH: it exited between the check and the signal, which is what stopping wants anyway.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** One connection attempt, no retries: refused while the server is still starting. */
async function ping(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, enableOfflineQueue: false });
  probe.on('error', () => undefined); // a refused connection is an answer here, not a failure
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
