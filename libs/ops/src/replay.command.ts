import { TOPICS, nextOffset, type Ledger } from '@tally/ledger';
import {
  foldedTopics,
  ProjectionNamespaces,
  ProjectionStore,
  ShardedStepWriter,
  shardsForPartitions,
  sortBatch,
  topicEventTypes,
  type ProjectorTopics,
} from '@tally/projections';
import { dropNamespace } from './namespaces';
import { OpsError } from './ops.error';
import { ProgressMeter, throttled, type ProgressListener, type ProgressSnapshot } from './progress';
import type { RedisClient } from '@tally/redis';
import { redisNowMs } from './redis-client';
import {
  planTopicRange,
  rangeSize,
  readTopicRanges,
  type PartitionRange,
  type RangeEnd,
  type RangeStart,
} from './topic-range';

/** Lifetime of the replayed namespace's dedup sets, as the projector's default. */
const DEDUP_TTL_MS = 48 * 3_600_000;
/** Events published this long after their decision may be missing at the tail of a `latest` replay. */
const TAIL_MARGIN_MS = 60_000;
/**
 * The projector's default step budget (`TALLY_PROJECTOR_STEP_CELLS`). A replay reads a bounded range
 * offline and could write far larger steps, but they run on the Redis that serves the decision hot
 * path too, and a step blocks it for its whole run (decisions have a 100 ms deadline). On the
 * ledger bench's events 12 000 cells run 25–45 ms a step; doubling the budget raised throughput by
 * a fifth at ~70 ms a step. Where events share cells (few keys, coarse buckets), a step of cells
 * holds many more events, which is where aggregating pays.
 */
const REPLAY_STEP_CELLS = 12_000;
/** Partitions fetched and parsed at once unless `ReplayOptions.concurrency` says otherwise. */
export const REPLAY_CONCURRENCY = 4;
/** Records per `StepWriter.add`: how far past its budget a step can run. */
const SLICE_RECORDS = 256;

export interface ReplayOptions {
  readonly namespace: string;
  readonly from: RangeStart;
  readonly to: RangeEnd;
  /** Replace an existing (inactive) namespace. */
  readonly force?: boolean;
  readonly auditRetentionMs: number;
  /**
   * Defaults to the ledger topics: usage, the decision topic, and the first contract's decision
   * topic (history written before `tally.decision.v2`; docs/adr/0009).
   */
  readonly topics?: ReplayTopics;
  /** Partitions fetched and parsed at once (default `REPLAY_CONCURRENCY`). */
  readonly concurrency?: number;
  /**
   * Shards of the new namespace; default: the active namespace's, else the topics' partition count
   * (`inheritedShards`).
   */
  readonly shards?: number;
  /** Cells per atomic step into Redis (default `REPLAY_STEP_CELLS`; see `StepWriter`). */
  readonly stepCells?: number;
  readonly onProgress?: ProgressListener;
}

export interface ReplayResult {
  readonly namespace: string;
  readonly from: string;
  readonly to: string;
  /**
   * Records read, events applied, duplicates skipped, invalid records skipped, and events the
   * namespace refused (a sum past 2^53 − 1: the live projector dead-lettered those; a replay only
   * counts them, so it never adds to the dead-letter topic).
   */
  readonly records: number;
  readonly applied: number;
  readonly duplicates: number;
  readonly invalid: number;
  readonly refused: number;
  readonly elapsedMs: number;
  readonly perSecond: number;
  /** Stored with the namespace: a projector switched to it resumes exactly after the replay. */
  readonly offsets: readonly { topic: string; partition: number; start: string; end: string }[];
}

/** What a replay writes, fixed before any event is read; handed to every worker. */
export interface ReplayPlan {
  readonly namespace: string;
  readonly shards: number;
  readonly ranges: readonly PartitionRange[];
  readonly topics: ReplayTopics;
  readonly auditRetentionMs: number;
  readonly concurrency?: number;
  readonly stepCells?: number;
}

/** The topics a replay folds (`foldedTopics`); `decisionV1` absent: that topic is not read. */
export type ReplayTopics = Omit<ProjectorTopics, 'deadLetter'>;

/** What replaying some ranges did. */
export interface RangesOutcome {
  readonly records: number;
  readonly applied: number;
  readonly duplicates: number;
  readonly invalid: number;
  readonly refused: number;
}

/**
 * `tally replay`: rebuilds projections from the ledger topics into a fresh namespace through the
 * projector's own sink (`ShardedStepWriter` over `ProjectionStore`: fold, dedup, offsets, atomic
 * steps cut by their Redis cost, the next folded while one is applied). The range is a range of the
 * log: from the first record published at or after `from` to the end offsets seen when the replay
 * starts (`latest`) or the first record published at or after `to`. Folding is order-independent
 * sums and the range is fixed up front, so replaying the same range twice gives identical
 * aggregates. In this process; `replayWithWorkers` spreads the same plan over processes.
 */
export async function replay(
  deps: { readonly ledger: Pick<Ledger, 'admin' | 'consumers'>; readonly redis: RedisClient },
  options: ReplayOptions,
): Promise<ReplayResult> {
  const plan = await planReplay(deps, options);
  const meter = new ProgressMeter(rangeSize(plan.ranges));
  const progress = throttled(options.onProgress);
  const outcome = await replayRanges(deps, plan, plan.ranges, (n) =>
    progress.report(() => meter.snapshot(n)),
  );
  const final = meter.snapshot(outcome.records);
  progress.final(final);
  await completeReplay(deps.redis, plan);
  return replayResult(options, plan, outcome, final);
}

/**
 * Checks the namespace is free (or drops it under `force`), fixes the range of every partition and
 * registers the namespace `running`, with its shards: the topics' partition count.
 */
export async function planReplay(
  deps: { readonly ledger: Pick<Ledger, 'admin'>; readonly redis: RedisClient },
  options: ReplayOptions,
): Promise<ReplayPlan> {
  const { namespace } = options;
  const namespaces = new ProjectionNamespaces(deps.redis);
  if (await namespaces.exists(namespace)) {
    if (options.force !== true) {
      throw new OpsError(`namespace ${namespace} exists; choose a fresh one, or --force to replace it`, true);
    }
    await dropNamespace(deps.redis, namespace);
  }
  const startedMs = await redisNowMs(deps.redis);
  const topics = options.topics ?? {
    usage: TOPICS.usage,
    decision: TOPICS.decision,
    decisionV1: TOPICS.decisionV1,
  };
  const perTopic = await Promise.all(
    foldedTopics(topics).map((topic) => planTopicRange(deps.ledger.admin, topic, options.from, options.to)),
  );
  const ranges = perTopic.flat();
  const coveredFrom = options.from === 'earliest' ? 0 : options.from;
  const coveredTo = options.to === 'latest' ? startedMs - TAIL_MARGIN_MS : options.to;
  const shards = await namespaces.beginReplay(namespace, {
    startedMs,
    coveredFrom,
    coveredTo,
    shards: options.shards ?? (await inheritedShards(namespaces, perTopic)),
  });
  return {
    namespace,
    shards,
    ranges,
    topics,
    auditRetentionMs: options.auditRetentionMs,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.stepCells === undefined ? {} : { stepCells: options.stepCells }),
  };
}

/**
 * The shard count a replayed namespace gets by default. Dedup is per shard, and a re-published twin
 * stays in its first copy's shard only when the shard count divides every partition count the
 * topics have had since (`shardOfPartition`): the topics' count now may be a multiple the log's
 * older records were not written under. The active namespace was created under the older count (or
 * inherited it), so its shard count is kept; without one, the topics' count now.
 */
async function inheritedShards(
  namespaces: ProjectionNamespaces,
  perTopic: readonly (readonly PartitionRange[])[],
): Promise<number> {
  const active = await namespaces.active();
  const shards = active === null ? 0 : await namespaces.shards(active);
  return shards > 0 ? shards : shardsForPartitions(perTopic.map((ranges) => ranges.length));
}

/**
 * Replays `ranges` (some or all of `plan.ranges`) into the plan's namespace; `onRead` is told the
 * records read so far. A worker process runs this on its share of the partitions.
 */
export async function replayRanges(
  deps: { readonly ledger: Pick<Ledger, 'consumers'>; readonly redis: RedisClient },
  plan: ReplayPlan,
  ranges: readonly PartitionRange[],
  onRead?: (records: number) => void,
): Promise<RangesOutcome> {
  const store = new ProjectionStore(deps.redis, {
    auditRetentionMs: plan.auditRetentionMs,
    dedupTtlMs: DEDUP_TTL_MS,
  });
  const expected = topicEventTypes(plan.topics);
  const sink = new ShardedStepWriter(store, plan.namespace, plan.shards, plan.stepCells ?? REPLAY_STEP_CELLS);
  let invalid = 0;
  // Concurrent handlers (partitions) share the writer: its steps take each partition's events in
  // offset order, and fold sums in any order, so steps cut anywhere give the same aggregates.
  const records = await readTopicRanges(
    deps.ledger.consumers,
    ranges,
    async (topic, partition, batch) => {
      for (let i = 0; i < batch.length; i += SLICE_RECORDS) {
        const slice = batch.slice(i, i + SLICE_RECORDS);
        const { events, records: valid, rejected } = sortBatch({ topic, records: slice }, expected);
        invalid += rejected.length;
        const last = slice[slice.length - 1].offset;
        await sink.add(events, { topic, partition, nextOffset: nextOffset(last) }, valid);
        // Lets Redis replies in between slices, so the next step goes out as soon as one is applied.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },
    {
      purpose: 'replay',
      concurrency: plan.concurrency ?? REPLAY_CONCURRENCY,
      ...(onRead === undefined ? {} : { onProgress: onRead }),
    },
  );
  const { applied, duplicates, refused } = await sink.flush();
  return { records, applied, duplicates, invalid, refused };
}

/**
 * The completion marker, written once every range is replayed. Partitions with nothing in range
 * still record where the range ends, so a projector switched to this namespace resumes there rather
 * than at the start of the topic.
 */
export async function completeReplay(redis: RedisClient, plan: ReplayPlan): Promise<void> {
  await new ProjectionNamespaces(redis).completeReplay(
    plan.namespace,
    plan.ranges.map((r) => ({ topic: r.topic, partition: r.partition, offset: r.end })),
  );
}

export function replayResult(
  options: ReplayOptions,
  plan: ReplayPlan,
  outcome: RangesOutcome,
  final: ProgressSnapshot,
): ReplayResult {
  return {
    namespace: plan.namespace,
    from: options.from === 'earliest' ? 'earliest' : new Date(options.from).toISOString(),
    to: options.to === 'latest' ? 'latest' : new Date(options.to).toISOString(),
    ...outcome,
    elapsedMs: Math.round(final.elapsedMs),
    perSecond: Math.round(final.perSecond),
    offsets: plan.ranges.map((r) => ({ topic: r.topic, partition: r.partition, start: r.start, end: r.end })),
  };
}
