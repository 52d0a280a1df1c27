import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { OpsError, type RangesOutcome, type ReplayWorkerPort } from '@tally/ops';
import type { CliContext } from './cli-context';

/** The compiled child entry beside this file (`npm run build`). */
const WORKER_MAIN = join(__dirname, 'replay-worker.js');

/** Messages of the replay IPC channel, parent → child then child → parent. */
export type ToWorker = {
  readonly kind: 'start';
  readonly assignment: Parameters<ReplayWorkerPort>[0];
  readonly env: NodeJS.ProcessEnv;
  readonly overrides: { redisUrl?: string; brokers?: string };
};
export type FromWorker =
  | { readonly kind: 'read'; readonly records: number }
  | { readonly kind: 'done'; readonly outcome: RangesOutcome }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * `ReplayWorkerPort` by `child_process.fork`: each worker is a separate Node process (its own event
 * loop, core and connections) running `replay-worker.js`, told its assignment and the CLI's
 * environment over IPC. It answers `done` with its outcome, or `failed`; exiting without either (a
 * crash, a kill) fails it too.
 */
export function forkedReplayWorkers(ctx: CliContext): ReplayWorkerPort {
  return (assignment, onRead) =>
    new Promise<RangesOutcome>((resolve, reject) => {
      if (!existsSync(WORKER_MAIN)) {
        reject(new OpsError(`--workers needs the built CLI (${WORKER_MAIN} is missing: npm run build)`));
        return;
      }
      const child = fork(WORKER_MAIN, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      let outcome: RangesOutcome | undefined;
      let failure: string | undefined;
      child.on('message', (raw: FromWorker) => {
        if (raw.kind === 'read') onRead(raw.records);
        else if (raw.kind === 'done') outcome = raw.outcome;
        else failure = raw.message;
      });
      child.on('error', (error) => (failure ??= error.message));
      child.on('exit', (code, signal) => {
        if (outcome !== undefined && code === 0) resolve(outcome);
        else reject(new Error(failure ?? `exited with ${signal ?? `code ${String(code)}`} before finishing`));
      });
      const start: ToWorker = { kind: 'start', assignment, env: ctx.env, overrides: ctx.overrides };
      child.send(start);
    });
}
