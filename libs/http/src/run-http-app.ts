import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { type DynamicModule, type LoggerService } from '@nestjs/common';
import { ConfigError, loadConfig, type TallyConfig } from '@tally/config';
import { createLogger, stopOnSignals } from '@tally/observability';
import { runClusterPrimary } from '@tally/cluster';
import { createHttpApp, httpAppOptions, type HttpAppOptions } from './create-http-app';
import { TokensLoadError } from '@tally/auth';

export interface HttpAppSpec {
  /** App name: log context and the `app` label of every metric. */
  readonly name: string;
  readonly port: (config: TallyConfig) => number;
  readonly module: (config: TallyConfig) => DynamicModule;
  /**
   * Worker processes (node:cluster) sharing the app's ports; absent or 1: this process serves. Only
   * apps whose state is shareable say more than 1 (decision-api: `TALLY_WORKERS`).
   */
  readonly workers?: (config: TallyConfig) => number | 'auto';
  /** Runs after the HTTP server listens (e.g. the gRPC server of decision-api). */
  readonly afterListen?: (
    app: Awaited<ReturnType<typeof createHttpApp>>,
    config: TallyConfig,
    logger: LoggerService,
  ) => Promise<void>;
}

/**
 * What every app's main.ts does: validate the whole configuration — settings, TLS files, then the
 * tokens file — before anything starts (all problems at once, exit 2), build the app, stop cleanly on
 * SIGTERM, listen, say where.
 */
export async function runHttpApp(spec: HttpAppSpec): Promise<void> {
  let config: TallyConfig;
  let options: HttpAppOptions;
  try {
    config = loadConfig();
    options = httpAppOptions(config, createLogger(spec.name, config.logLevel));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${spec.name}: ${error.message}\n`);
    process.exit(2);
  }
  let module: DynamicModule;
  try {
    module = spec.module(config);
  } catch (error) {
    // Read while the module is declared: like the settings, every problem at once and exit 2.
    if (!(error instanceof TokensLoadError)) throw error;
    process.stderr.write(`${spec.name}: ${error.message}\n`);
    process.exit(2);
  }
  const logger = options.logger;
  const workers = workerCount(spec.workers?.(config) ?? 1);
  if (workers > 1 && cluster.isPrimary) {
    // Settings and files were checked above, once, so a bad file exits 2 here and not in every worker.
    runClusterPrimary(spec.name, workers, logger);
    return;
  }
  // A worker whose primary is gone (killed with SIGKILL) must not serve on, orphaned and unrestartable.
  if (cluster.isWorker) process.once('disconnect', () => process.exit(1));
  const app = await createHttpApp(module, options);
  stopOnSignals(app, logger);
  const port = spec.port(config);
  await app.listen({ port, host: config.host });
  logger.log(`${spec.name} listening on ${options.tls ? 'https' : 'http'}://${config.host}:${port}`);
  if (spec.afterListen) await spec.afterListen(app, config, logger);
}

/** `auto`: one worker per core the process may use (cgroup and affinity limits included). */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? availableParallelism() : setting;
}
