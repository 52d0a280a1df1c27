import { createLedger, type Ledger } from '@tally/ledger';
import { loadOpsConfig, type OpsConfig, type ProgressListener } from '@tally/ops';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { duration, rate } from './output';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** All of stdin (`tally tokens hash` reads a token there); absent where nothing can be piped in. */
  stdin?(): Promise<string>;
}

/** What a command prints and how the process exits. */
export interface CommandOutcome {
  /** 0 ok, 1 differences or failures; `bench` passes its script's own code through. */
  readonly exitCode: number;
  /** Printed with `--json`. */
  readonly json: unknown;
  /** Printed for people. */
  readonly text: string;
}

/**
 * The resources of one CLI run, opened on first use (a `policy check` never connects to anything)
 * and closed by `close`, so the process exits without waiting on sockets.
 */
export class CliContext {
  private cachedConfig?: OpsConfig;
  private cachedLedger?: Ledger;
  private cachedRedis?: RedisClient;

  constructor(
    /** Also what a replay's worker processes are started with (`replay-worker.process.ts`). */
    readonly env: NodeJS.ProcessEnv,
    readonly overrides: { redisUrl?: string; brokers?: string },
    readonly io: CliIo,
    readonly nowMs: number,
  ) {}

  config(): OpsConfig {
    this.cachedConfig ??= loadOpsConfig(this.env, this.overrides);
    return this.cachedConfig;
  }

  ledger(): Ledger {
    // kafkajs logs stay silent: failures surface as the command's error, in one line.
    this.cachedLedger ??= createLedger({
      brokers: this.config().kafkaBrokers,
      clientId: 'tally-cli',
      logLevel: 'nothing',
    });
    return this.cachedLedger;
  }

  redis(): RedisClient {
    this.cachedRedis ??= createRedisClient(this.config().redis, 'command');
    return this.cachedRedis;
  }

  /** Progress lines on stderr (stdout stays clean for `--json`). */
  progress(label: string): ProgressListener {
    return (p) => {
      const pct = p.total > 0 ? ` (${Math.floor((p.done * 100) / p.total)}%)` : '';
      const eta = p.etaMs === null ? '' : ` ETA ${duration(p.etaMs)}`;
      this.io.stderr(`${label}: ${p.done}/${p.total}${pct} ${rate(p.perSecond)}${eta}`);
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      this.cachedLedger?.close(),
      this.cachedRedis?.quit().catch(() => this.cachedRedis?.disconnect()),
    ]);
  }
}
