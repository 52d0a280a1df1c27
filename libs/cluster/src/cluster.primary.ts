import cluster, { type Worker } from 'node:cluster';
import { type LoggerService } from '@nestjs/common';
import { AggregatorRegistry } from 'prom-client';
import { WorkerAsks } from './cluster.asks';
import { nextRestart } from './cluster.backoff';
import { allocatorOf, workerAllocatorEnv, workerEnv, workerExecArgv } from './cluster.runtime';
import {
  type ClusterMessage,
  isClusterMessage,
  type WorkerReload,
  type WorkerValue,
} from './cluster.messages';

/** Workers get this long to drain after SIGTERM (their own grace is 15 s) before they are killed. */
const STOP_GRACE_MS = 20_000;

/**
 * The decision API's primary process with `TALLY_WORKERS` > 1: forks the workers (each runs the whole
 * app; node:cluster shares the HTTP and gRPC listening sockets among them), restarts one that dies
 * with a backoff (never a tight loop), relays shared reloads and metrics, and on SIGTERM/SIGINT stops
 * every worker (each drains) and exits 0 only if they all exited 0. It builds no app (no Redis, no
 * listener): a bug in the app can kill a worker, never the primary.
 */
export function runClusterPrimary(name: string, workers: number, logger: LoggerService): void {
  const aggregator = new AggregatorRegistry();
  // Late or missing workers are reported without a result: the asker refuses to say OK for them.
  const reloads = new WorkerAsks<WorkerReload>((asker, id, results) =>
    reply(asker, { tally: 'reload:done', id, results }),
  );
  const gathers = new WorkerAsks<WorkerValue>((asker, id, results) =>
    reply(asker, { tally: 'gather:done', id, results }),
  );
  const bornAt = new Map<number, number>();
  let deathsInARow = 0;
  let stopping = false;
  let failed = false;

  // Not Tally settings (libs/config owns those): node's own flags and the C library's environment,
  // passed on so that every worker runs with the memory settings measured for it (cluster.runtime.ts).
  const execArgv = workerExecArgv(process.execArgv, process.env.NODE_OPTIONS);
  cluster.setupPrimary({ execArgv });
  const extraEnv = { ...workerEnv(process.env), ...workerAllocatorEnv(process.env) };

  const fork = (): void => {
    const worker = cluster.fork(extraEnv);
    bornAt.set(worker.id, Date.now());
    worker.on('message', (message: unknown) => onMessage(worker, message));
  };

  const onMessage = (worker: Worker, message: unknown): void => {
    if (!isClusterMessage(message)) return;
    switch (message.tally) {
      case 'reload':
        reloads.start(worker, message.id, (w, id) =>
          reply(w, { tally: 'reload:run', id, file: message.file }),
        );
        return;
      case 'reload:ack':
        reloads.answer(worker, message.id, message.result);
        return;
      case 'metrics':
        aggregator.clusterMetrics().then(
          (text) => reply(worker, { tally: 'metrics:done', id: message.id, text }),
          (error: unknown) => reply(worker, { tally: 'metrics:done', id: message.id, error: String(error) }),
        );
        return;
      case 'gather':
        gathers.start(worker, message.id, (w, id) =>
          reply(w, { tally: 'gather:run', id, topic: message.topic }),
        );
        return;
      case 'gather:ack':
        gathers.answer(worker, message.id, message.result);
        return;
      case 'reload:run':
      case 'reload:done':
      case 'gather:run':
      case 'gather:done':
      case 'metrics:done':
        return; // the primary's own messages: never sent to it
    }
  };

  cluster.on('exit', (worker, code, signal) => {
    // A worker that died mid-reload answers nothing; its replacement reads the file at boot anyway.
    reloads.exited(worker.id);
    gathers.exited(worker.id);
    const lived = Date.now() - (bornAt.get(worker.id) ?? Date.now());
    bornAt.delete(worker.id);
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    const next = nextRestart(lived, deathsInARow);
    deathsInARow = next.deathsInARow;
    const delay = next.delayMs;
    logger.error(
      `${name} worker ${worker.process.pid} exited (${signal ?? `code ${code}`}) after ${lived} ms; restarting in ${delay} ms`,
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, delay);
  });

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.log(`${signal} received, stopping ${Object.keys(cluster.workers ?? {}).length} workers`);
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (live.length === 0) process.exit(0);
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error(`workers still running after ${STOP_GRACE_MS} ms, killing them`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_GRACE_MS).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  logger.log(
    `${name} primary ${process.pid} forking ${workers} workers (node ${execArgv.join(' ')}; ` +
      `${allocatorOf({ ...process.env, ...extraEnv })})`,
  );
  for (let i = 0; i < workers; i++) fork();
}

function reply(worker: Worker, message: ClusterMessage): void {
  if (worker.isConnected()) worker.send(message);
}
