import { type INestApplicationContext, type LoggerService } from '@nestjs/common';

/**
 * SIGTERM/SIGINT → Nest's shutdown hooks (each module closes its connections in
 * onApplicationShutdown), then exit. A second signal, or a shutdown hanging past the grace period,
 * exits at once: an orchestrator's kill must never wait on a wedged dependency.
 */
export function stopOnSignals(app: INestApplicationContext, logger: LoggerService, graceMs = 15_000): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.log(`${signal} received, shutting down`);
    const timer = setTimeout(() => {
      logger.error(`shutdown exceeded ${graceMs} ms, exiting`);
      process.exit(1);
    }, graceMs);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
