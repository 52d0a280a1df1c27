/**
 * @tally/cluster — the decision API's node:cluster processes: the primary (fork, restart with
 * backoff, drain), the worker side (summed metrics gathered across workers, reloads shared by every
 * worker) and the workers' runtime flags (allocator, Node flags).
 *
 * Does NOT own:
 * - the HTTP app each worker runs (`runHttpApp`, @tally/http decides when to fork);
 * - the metrics registry (@tally/observability); the settings (@tally/config).
 */
export { type WorkerReload } from './cluster.messages';
export { runClusterPrimary } from './cluster.primary';
export { WORKER_NODE_FLAGS, workerAllocatorEnv } from './cluster.runtime';
export {
  gatherEverywhere,
  metricsEverywhere,
  offerGather,
  offerMetrics,
  reloadEverywhere,
  shareReload,
} from './cluster.worker';
