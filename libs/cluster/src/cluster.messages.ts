import { type FileReloadResult } from '@tally/config';

/**
 * The IPC vocabulary between the decision API's primary and its workers (node:cluster). Every message
 * carries `tally` so that prom-client's own messages on the same channel are told apart.
 *
 * - `reload` (worker → primary): a reload request arrived at this worker; every worker must apply it.
 * - `reload:run` (primary → every worker): reload `file` now and answer `reload:ack`.
 * - `reload:done` (primary → the asking worker): every live worker's outcome.
 * - `metrics` (worker → primary) / `metrics:done`: the exposition summed over the workers.
 * - `gather` (worker → primary), `gather:run` (primary → every worker), `gather:ack`, `gather:done`:
 *   what every worker offers under `topic` (`offerGather`), e.g. its reload history, collected.
 */
export type ClusterMessage =
  | { readonly tally: 'reload'; readonly id: number; readonly file: string }
  | { readonly tally: 'reload:run'; readonly id: number; readonly file: string }
  | { readonly tally: 'reload:ack'; readonly id: number; readonly result: WorkerReload }
  | { readonly tally: 'reload:done'; readonly id: number; readonly results: readonly WorkerReload[] }
  | { readonly tally: 'gather'; readonly id: number; readonly topic: string }
  | { readonly tally: 'gather:run'; readonly id: number; readonly topic: string }
  | { readonly tally: 'gather:ack'; readonly id: number; readonly result: WorkerValue }
  | { readonly tally: 'gather:done'; readonly id: number; readonly results: readonly WorkerValue[] }
  | { readonly tally: 'metrics'; readonly id: number }
  | { readonly tally: 'metrics:done'; readonly id: number; readonly text?: string; readonly error?: string };

/** One worker's outcome of a shared reload; `result` is absent when it could not answer in time. */
export interface WorkerReload {
  readonly pid: number;
  readonly result?: FileReloadResult;
}

/** One worker's answer to a `gather`; `value` is absent when it offers nothing or did not answer in time. */
export interface WorkerValue {
  readonly pid: number;
  readonly value?: unknown;
}

export function isClusterMessage(message: unknown): message is ClusterMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { tally?: unknown }).tally === 'string'
  );
}

/** How long the primary waits for every worker's reload or metrics before answering without the late ones. */
export const CLUSTER_ASK_TIMEOUT_MS = 10_000;
