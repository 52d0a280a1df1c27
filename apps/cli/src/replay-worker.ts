import 'reflect-metadata';
import { replayRanges } from '@tally/ops';
import { CliContext } from './cli-context';
import type { FromWorker, ToWorker } from './replay-worker.process';

/** Progress messages at most this often: the parent redraws one display for every worker. */
const READ_EVERY_MS = 250;

/**
 * A replay worker process (`tally replay --workers N` forks it): wiring only. Takes its assignment
 * over IPC, replays its ranges into the namespace's shards with its own Redis and Kafka clients,
 * reports records read, and answers its outcome; any failure is answered and exits 1.
 */
function tell(message: FromWorker): Promise<void> {
  return new Promise((resolve) => process.send?.(message, undefined, {}, () => resolve()) ?? resolve());
}

process.once('message', (start: ToWorker) => {
  const ctx = new CliContext(start.env, start.overrides, { stdout: () => {}, stderr: () => {} }, Date.now());
  let last = 0;
  const onRead = (records: number): void => {
    if (Date.now() - last < READ_EVERY_MS) return;
    last = Date.now();
    void tell({ kind: 'read', records });
  };
  replayRanges(
    { ledger: ctx.ledger(), redis: ctx.redis() },
    start.assignment.plan,
    start.assignment.ranges,
    onRead,
  )
    .then(async (outcome) => {
      await tell({ kind: 'read', records: outcome.records });
      await tell({ kind: 'done', outcome });
      process.exitCode = 0;
    })
    .catch(async (error: unknown) => {
      await tell({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
      process.exitCode = 1;
    })
    .finally(() => {
      // Exit once the clients are closed, whatever timers a client library leaves behind.
      void ctx.close().finally(() => process.exit());
    });
});
