import type { Ledger } from '@tally/ledger';
import { shardOfPartition } from '@tally/projections';
import type { RedisClient } from '@tally/redis';
import { OpsError } from './ops.error';
import { ProgressMeter, throttled } from './progress';
import {
  completeReplay,
  planReplay,
  replayResult,
  type RangesOutcome,
  type ReplayOptions,
  type ReplayPlan,
  type ReplayResult,
} from './replay.command';
import { rangeSize, type PartitionRange } from './topic-range';

/** What one worker process replays: its share of the plan's ranges, into the plan's namespace. */
export interface ReplayAssignment {
  readonly worker: number;
  readonly plan: ReplayPlan;
  readonly ranges: readonly PartitionRange[];
}

/**
 * Runs an assignment in another process (the CLI forks itself; `replayRanges` is the body):
 * resolves with what it replayed, rejects when the process fails or exits without an outcome.
 * `onRead` is told the records the worker has read so far.
 */
export type ReplayWorkerPort = (
  assignment: ReplayAssignment,
  onRead: (records: number) => void,
) => Promise<RangesOutcome>;

/**
 * The plan's ranges dealt to `workers` workers by shard: worker `w` takes every partition (of both
 * topics) whose shard `s` has `s mod workers = w`. So one shard's steps all come from one process,
 * in order, as with one projector member per shard; and the workers' shares are disjoint.
 */
export function dealRanges(plan: ReplayPlan, workers: number): PartitionRange[][] {
  const shares: PartitionRange[][] = Array.from({ length: workers }, () => []);
  for (const range of plan.ranges) {
    shares[shardOfPartition(range.partition, plan.shards) % workers]?.push(range);
  }
  return shares.filter((share) => share.length > 0);
}

/**
 * `tally replay --workers N`: plans the replay here (namespace registered `running`, one range per
 * partition), has `workers` processes replay disjoint shares of it (`dealRanges`), shows their
 * records read as one progress display, and writes the completion marker only once every worker
 * succeeded. A failed worker fails the replay: the namespace stays `running` (switching to it needs
 * `--force`; replay again with `--force`), whatever the other workers wrote.
 */
export async function replayWithWorkers(
  deps: { readonly ledger: Pick<Ledger, 'admin'>; readonly redis: RedisClient },
  options: ReplayOptions & { readonly workers: number },
  run: ReplayWorkerPort,
): Promise<ReplayResult & { readonly workers: number }> {
  const plan = await planReplay(deps, options);
  const shares = dealRanges(plan, Math.min(options.workers, plan.shards));
  const meter = new ProgressMeter(rangeSize(plan.ranges));
  const progress = throttled(options.onProgress);
  const read = shares.map(() => 0);
  const total = () => read.reduce((a, b) => a + b, 0);
  const settled = await Promise.allSettled(
    shares.map((ranges, worker) =>
      run({ worker, plan, ranges }, (records) => {
        read[worker] = records;
        progress.report(() => meter.snapshot(total()));
      }),
    ),
  );
  const failures = settled.flatMap((s, worker) =>
    s.status === 'rejected' ? [`worker ${worker}: ${String((s.reason as Error)?.message ?? s.reason)}`] : [],
  );
  if (failures.length > 0) {
    throw new OpsError(
      `replay into ${plan.namespace} failed (${failures.join('; ')}); the namespace stays incomplete: replay again with --force`,
    );
  }
  const outcomes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const sum = (pick: (o: RangesOutcome) => number) => outcomes.reduce((n, o) => n + pick(o), 0);
  const outcome: RangesOutcome = {
    records: sum((o) => o.records),
    applied: sum((o) => o.applied),
    duplicates: sum((o) => o.duplicates),
    invalid: sum((o) => o.invalid),
    refused: sum((o) => o.refused),
  };
  const final = meter.snapshot(outcome.records);
  progress.final(final);
  await completeReplay(deps.redis, plan);
  return { ...replayResult(options, plan, outcome, final), workers: shares.length };
}
