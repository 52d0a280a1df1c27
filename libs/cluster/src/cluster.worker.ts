import cluster from 'node:cluster';
import { type FileReloadResult, type ReloadableFile } from '@tally/config';
import { AggregatorRegistry, type Registry } from 'prom-client';
import {
  CLUSTER_ASK_TIMEOUT_MS,
  type ClusterMessage,
  isClusterMessage,
  type WorkerReload,
  type WorkerValue,
} from './cluster.messages';

type Reloadable = Pick<ReloadableFile<{ readonly version: string }, object>, 'reload'>;

const stores = new Map<string, Reloadable>();
const offers = new Map<string, () => unknown>();
const waiting = new Map<number, (message: ClusterMessage) => void>();
let nextId = 0;
let listening = false;

/** True in a worker forked by the decision API's primary (`TALLY_WORKERS` > 1). */
export function inClusterWorker(): boolean {
  return cluster.isWorker;
}

/**
 * Makes `store` reachable from the primary under `file` (`policy file`, `tokens file`): a reload asked
 * of any worker runs in every worker. Called at boot by whoever owns the store's reload endpoint.
 */
export function shareReload(file: string, store: Reloadable): void {
  stores.set(file, store);
  listen();
}

/**
 * Reloads `file` in every worker and resolves with each one's outcome (this worker's included). In a
 * single process it is the local reload. The primary answers once every live worker has acked, so an
 * OK built from these results means every worker runs the new version.
 */
export async function reloadEverywhere(file: string, local: Reloadable): Promise<readonly WorkerReload[]> {
  if (!cluster.isWorker) return [{ pid: process.pid, result: await local.reload('request') }];
  const answer = await ask({ tally: 'reload', id: nextId++, file });
  return answer.tally === 'reload:done' ? answer.results : [];
}

/**
 * Makes `read` answer the primary's `gather` of `topic` in this worker (a value that survives IPC:
 * plain JSON). Called at boot by the owner of what is gathered.
 */
export function offerGather(topic: string, read: () => unknown): void {
  offers.set(topic, read);
  listen();
}

/**
 * What every worker offers under `topic` (this one's included), one entry per live worker; in a single
 * process, `local` alone. A worker that did not answer in time has no `value`.
 */
export async function gatherEverywhere(topic: string, local: () => unknown): Promise<readonly WorkerValue[]> {
  if (!cluster.isWorker) return [{ pid: process.pid, value: local() }];
  const answer = await ask({ tally: 'gather', id: nextId++, topic });
  return answer.tally === 'gather:done' ? answer.results : [];
}

/** In a worker: the metrics of every worker, summed by the primary; in a single process: `registry`'s. */
export async function metricsEverywhere(registry: Registry): Promise<string> {
  if (!cluster.isWorker) return registry.metrics();
  const answer = await ask({ tally: 'metrics', id: nextId++ });
  if (answer.tally !== 'metrics:done' || answer.text === undefined) {
    throw new Error(
      `metrics of the workers: ${answer.tally === 'metrics:done' ? answer.error : 'no answer'}`,
    );
  }
  return answer.text;
}

/**
 * Worker side of prom-client's aggregation: from now on this worker answers the primary's requests
 * for its metrics with `registry`. Called once at boot, before the primary may ask.
 */
export function offerMetrics(registry: Registry): void {
  if (!cluster.isWorker) return;
  new AggregatorRegistry(); // installs prom-client's worker listener (idempotent)
  AggregatorRegistry.setRegistries([registry]);
  listen();
}

function ask(message: ClusterMessage & { readonly id: number }): Promise<ClusterMessage> {
  listen();
  return new Promise((resolve, reject) => {
    // The primary answers within its own deadline; this one only covers a primary that is gone.
    const timer = setTimeout(() => {
      waiting.delete(message.id);
      reject(new Error('the primary did not answer'));
    }, CLUSTER_ASK_TIMEOUT_MS * 2);
    waiting.set(message.id, (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    process.send?.(message);
  });
}

function listen(): void {
  if (listening || !cluster.isWorker) return;
  listening = true;
  process.on('message', (message: unknown) => {
    if (!isClusterMessage(message)) return;
    if (message.tally === 'reload:run') {
      void runReload(message.id, message.file);
      return;
    }
    if (message.tally === 'gather:run') {
      const read = offers.get(message.topic);
      const ack: ClusterMessage = {
        tally: 'gather:ack',
        id: message.id,
        result: read === undefined ? { pid: process.pid } : { pid: process.pid, value: read() },
      };
      process.send?.(ack);
      return;
    }
    const answer = waiting.get(message.id);
    if (answer === undefined) return;
    waiting.delete(message.id);
    answer(message);
  });
}

async function runReload(id: number, file: string): Promise<void> {
  const store = stores.get(file);
  let result: FileReloadResult | undefined;
  try {
    result = store === undefined ? undefined : await store.reload('request');
  } catch {
    result = undefined;
  }
  const ack: ClusterMessage = { tally: 'reload:ack', id, result: { pid: process.pid, result } };
  process.send?.(ack);
}
