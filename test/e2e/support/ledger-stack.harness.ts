/**
 * A private local stack (docker/local/stack.sh with its own STACK_DIR and ports) for suites that stop
 * and start the broker: the shared stack of the other engineers is never touched. Everything is
 * stopped by the pids stack.sh recorded.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { eventually, freePort } from '@tally/testing';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');

/** Whether a pid is a live process (a zombie has exited even while its /proc entry remains). */
export async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

export class PrivateStack {
  private constructor(
    readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly redisUrl: string,
    readonly brokers: readonly string[],
  ) {}

  /** `stack.sh up` in a fresh temp folder on free ports. */
  static async up(): Promise<PrivateStack> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-ledger-e2e-'));
    const [redisPort, kafkaPort, controllerPort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      ...process.env,
      STACK_DIR: dir,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_PORT: String(redisPort),
      KAFKA_PORT: String(kafkaPort),
      KAFKA_CONTROLLER_PORT: String(controllerPort),
    };
    const stack = new PrivateStack(dir, env, env.REDIS_URL, [`127.0.0.1:${kafkaPort}`]);
    try {
      await stack.script('up');
    } catch (error) {
      await stack.down(); // whatever did start (Redis, say) is stopped by its recorded pid
      throw error;
    }
    return stack;
  }

  /** Starts what is not running (after `stopBroker`, only the broker). */
  async startBroker(): Promise<void> {
    await this.script('up');
  }

  /** SIGTERM to the broker alone, by its recorded pid; resolves once it has exited. */
  async stopBroker(): Promise<void> {
    const pid = Number((await readFile(join(this.dir, 'kafka.pid'), 'utf8')).trim());
    process.kill(pid, 'SIGTERM');
    await eventually(
      () => alive(pid),
      (running) => !running,
      { timeoutMs: 60_000, intervalMs: 50, what: `broker pid ${pid} to exit after SIGTERM` },
    );
  }

  async down(): Promise<void> {
    await this.script('down').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async script(command: 'up' | 'down'): Promise<void> {
    await run('bash', [join(ROOT, 'docker/local/stack.sh'), command], { cwd: ROOT, env: this.env });
  }
}
