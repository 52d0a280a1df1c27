/**
 * The built apps as child processes, run from the tree `buildTree` (@tally/testing) compiled into a
 * private folder, so this suite never races another engineer's `npm run build`.
 * decision-api and relay run their own main.js; the projector runs main.ts's exact wiring with
 * `ProjectorModule.forRoot(config, overrides)` (as test/e2e/projector.kill.test.ts does) for a short
 * session timeout: a SIGKILLed member then leaves the group in seconds instead of 30 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { eventually, freePort } from '@tally/testing';

const ROOT = resolve(__dirname, '../../..');

export const CALLER_TOKEN = 'ledger-e2e-caller-token-0123456789';
const ADMIN_TOKEN = 'ledger-e2e-admin-token-0123456789';
const TOKEN_SECRET = 'ledger-e2e-token-secret-0123456789';

export type AppKind = 'decision-api' | 'relay' | 'projector';

const PROJECTOR = (out: string): string => `
require('reflect-metadata');
const { runHttpApp } = require(${JSON.stringify(join(out, 'libs/http/src/index.js'))});
const { ProjectorModule } = require(${JSON.stringify(join(out, 'apps/projector/src/projector.module.js'))});
void runHttpApp({ name: 'projector', port: (c) => c.projectorPort,
  module: (c) => ProjectorModule.forRoot(c, { sessionTimeoutMs: 7000, lagPollMs: 1000 }) });
`;

export interface AppEnv {
  readonly out: string;
  readonly redisUrl: string;
  readonly brokers: readonly string[];
  readonly policiesPath: string;
  /** Settings on top of (or instead of) the suite's defaults below. */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

/** One app process; `output` keeps its stderr for failure messages, `logs` its stdout (JSON lines). */
export class AppProcess {
  readonly output: string[] = [];
  readonly logs: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly kind: AppKind,
    readonly child: ChildProcess,
    readonly baseUrl: string,
    /** `host:port` of the decision-api's Envoy RLS gRPC server. */
    readonly grpcAddress: string,
  ) {
    this.exited = new Promise((done) => child.once('exit', (code) => done(code)));
    child.stderr?.on('data', (d: Buffer) => this.output.push(String(d)));
    child.stdout?.on('data', (d: Buffer) => this.logs.push(String(d)));
  }

  static async start(kind: AppKind, env: AppEnv): Promise<AppProcess> {
    const [port, grpcPort] = [await freePort(), await freePort()];
    const args =
      kind === 'projector' ? ['-e', PROJECTOR(env.out)] : [join(env.out, `apps/${kind}/src/main.js`)];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL: env.redisUrl,
        KAFKA_BROKERS: env.brokers.join(','),
        TALLY_POLICIES: env.policiesPath,
        TALLY_API_TOKENS: CALLER_TOKEN,
        TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
        TALLY_TOKEN_SECRET: TOKEN_SECRET,
        TALLY_SHARDS: '8',
        TALLY_TOPIC_PARTITIONS: '6',
        // A slow shared machine must not turn into 503s: the invariant is about the ledger, not deadlines.
        TALLY_BACKEND_TIMEOUT_MS: '5000',
        TALLY_LOG_LEVEL: 'warn',
        // One process: the suites kill and count one pid (TALLY_WORKERS has its own e2e test).
        TALLY_WORKERS: '1',
        TALLY_HTTP_PORT: String(port),
        TALLY_GRPC_PORT: String(grpcPort),
        TALLY_RELAY_PORT: String(port),
        // A dead relay's entries are re-claimed after 5 s instead of the production 30 s.
        TALLY_RELAY_CLAIM_IDLE: '5s',
        TALLY_PROJECTOR_PORT: String(port),
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        ...env.extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const app = new AppProcess(kind, child, `http://127.0.0.1:${port}`, `127.0.0.1:${grpcPort}`);
    const ready = await eventually(
      () => app.ready(),
      (ok) => ok || child.exitCode !== null,
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch(() => false);
    if (!ready) {
      child.kill('SIGKILL');
      throw new Error(`${kind} did not get ready: ${app.output.join('').slice(-2000)}`);
    }
    return app;
  }

  /** The sum of a Prometheus series over its label sets (NaN samples count as 0). */
  async metric(name: string): Promise<number> {
    const text = await (await fetch(`${this.baseUrl}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
    }
    return sum;
  }

  async kill(signal: NodeJS.Signals): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  private async ready(): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl}/readyz`);
      const body = (await res.json()) as { components?: Record<string, { status: string }> };
      if (this.kind === 'projector') return body.components?.consumer?.status === 'up';
      return res.status === 200;
    } catch {
      return false;
    }
  }
}
