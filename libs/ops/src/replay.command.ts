import type { LedgerEvent } from '@tally/events';
import { TOPICS, nextOffset, type Ledger } from '@tally/ledger';
import {
  NAMESPACES_KEY,
  ProjectionKeys,
  ProjectionStore,
  offsetField,
  sortBatch,
  type OffsetMark,
} from '@tally/projections';
import {
  META_COVERED_FROM,
  META_COVERED_TO,
  META_REPLAY,
  dropNamespace,
  namespaceExists,
} from './namespaces';
import { OpsError } from './ops.error';
import { ProgressMeter, throttled, type ProgressListener, type ProgressSnapshot } from './progress';
import { redisNowMs, type OpsRedis } from './redis-client';
import { planTopicRange, rangeSize, readTopicRanges, type RangeEnd, type RangeStart } from './topic-range';

/** Lifetime of the replayed namespace's dedup sets, as the projector's default. */
const DEDUP_TTL_MS = 48 * 3_600_000;
/** Events published this long after their decision may be missing at the tail of a `latest` replay. */
const TAIL_MARGIN_MS = 60_000;

export interface ReplayOptions {
  readonly namespace: string;
  readonly from: RangeStart;
  readonly to: RangeEnd;
  /** Replace an existing (inactive) namespace. */
  readonly force?: boolean;
  readonly auditRetentionMs: number;
  /** Defaults to the ledger topics. */
  readonly topics?: { readonly usage: string; readonly decision: string };
  /** Partitions fetched and parsed at once (default 4). */
  readonly concurrency?: number;
  /** Events per atomic step into Redis (default 500; see BufferedSink). */
  readonly stepEvents?: number;
  readonly onProgress?: ProgressListener;
}

export interface ReplayResult {
  readonly namespace: string;
  readonly from: string;
  readonly to: string;
  /** Records read, events applied, duplicates skipped, invalid records skipped. */
  readonly records: number;
  readonly applied: number;
  readonly duplicates: number;
  readonly invalid: number;
  readonly elapsedMs: number;
  readonly perSecond: number;
  /** Stored with the namespace: a projector switched to it resumes exactly after the replay. */
  readonly offsets: readonly { topic: string; partition: number; start: string; end: string }[];
}

/**
 * `tally replay`: rebuilds projections from the ledger topics into a fresh namespace through the
 * projector's own sink (`ProjectionStore.applyBatch`: fold, dedup, offsets, one atomic step per
 * batch). The range is a range of the log: from the first record published at or after `from` to
 * the end offsets seen when the replay starts (`latest`) or the first record published at or after
 * `to`. Folding is order-independent sums and the range is fixed up front, so replaying the same
 * range twice gives identical aggregates.
 */
export async function replay(
  deps: { readonly ledger: Pick<Ledger, 'admin' | 'consumers'>; readonly redis: OpsRedis },
  options: ReplayOptions,
): Promise<ReplayResult> {
  const { namespace } = options;
  const keys = new ProjectionKeys(namespace);
  if (await namespaceExists(deps.redis, namespace)) {
    if (options.force !== true) {
      throw new OpsError(`namespace ${namespace} exists; choose a fresh one, or --force to replace it`, true);
    }
    await dropNamespace(deps.redis, namespace);
  }
  const startedMs = await redisNowMs(deps.redis);
  const topics = options.topics ?? { usage: TOPICS.usage, decision: TOPICS.decision };
  const ranges = [
    ...(await planTopicRange(deps.ledger.admin, topics.usage, options.from, options.to)),
    ...(await planTopicRange(deps.ledger.admin, topics.decision, options.from, options.to)),
  ];
  const coveredFrom = options.from === 'earliest' ? 0 : options.from;
  const coveredTo = options.to === 'latest' ? startedMs - TAIL_MARGIN_MS : options.to;
  await deps.redis.sadd(NAMESPACES_KEY, namespace);
  await deps.redis.hset(keys.meta(), {
    created: startedMs,
    [META_REPLAY]: 'running',
    [META_COVERED_FROM]: coveredFrom,
    [META_COVERED_TO]: coveredTo,
  });

  const store = new ProjectionStore(deps.redis, {
    auditRetentionMs: options.auditRetentionMs,
    dedupTtlMs: DEDUP_TTL_MS,
  });
  const expected = { [topics.usage]: 'tally.usage.v1', [topics.decision]: 'tally.decision.v1' };
  const meter = new ProgressMeter(rangeSize(ranges));
  const progress = throttled(options.onProgress);
  const stepEvents = options.stepEvents ?? 500;
  const sink = new BufferedSink(store, namespace, stepEvents);
  let invalid = 0;
  const read = await readTopicRanges(
    deps.ledger.consumers,
    ranges,
    async (topic, partition, batch) => {
      for (let i = 0; i < batch.length; i += stepEvents) {
        const records = batch.slice(i, i + stepEvents);
        const { events, rejected } = sortBatch({ topic, partition, highWatermark: '0', records }, expected);
        invalid += rejected.length;
        const last = records[records.length - 1].offset;
        await sink.add(events, { topic, partition, nextOffset: nextOffset(last) });
      }
    },
    {
      purpose: 'replay',
      concurrency: options.concurrency ?? 4,
      onProgress: (n) => progress.report(() => meter.snapshot(n)),
    },
  );
  await sink.flush();
  const { applied, duplicates } = sink;
  const final: ProgressSnapshot = meter.snapshot(read);
  progress.final(final);
  // Partitions with nothing in range still record where the range ends, so a projector switched
  // to this namespace resumes there rather than at the start of the topic.
  await storeMissingOffsets(deps.redis, keys.offsets(), ranges);
  await deps.redis.hset(keys.meta(), META_REPLAY, 'complete');
  return {
    namespace,
    from: options.from === 'earliest' ? 'earliest' : new Date(options.from).toISOString(),
    to: options.to === 'latest' ? 'latest' : new Date(options.to).toISOString(),
    records: read,
    applied,
    duplicates,
    invalid,
    elapsedMs: Math.round(final.elapsedMs),
    perSecond: Math.round(final.perSecond),
    offsets: ranges.map((r) => ({ topic: r.topic, partition: r.partition, start: r.start, end: r.end })),
  };
}

async function storeMissingOffsets(
  redis: OpsRedis,
  key: string,
  ranges: readonly { topic: string; partition: number; end: string }[],
): Promise<void> {
  for (const r of ranges) await redis.hsetnx(key, offsetField(r.topic, r.partition), r.end);
}

/**
 * Gathers the events of many Kafka batches (any partitions) into one step of the sink, so a step
 * writes each usage cell once for many small batches. Steps run one at a time; a handler waits while
 * its step is written (backpressure). Each step carries the offsets its events reach, like a
 * projector batch. The step size stays near a live batch's: the sink spreads a step's arguments
 * into one call, and far larger steps overflow the stack there.
 */
class BufferedSink {
  private events: LedgerEvent[] = [];
  private offsets = new Map<string, OffsetMark>();
  private writing: Promise<void> = Promise.resolve();
  applied = 0;
  duplicates = 0;

  constructor(
    private readonly store: ProjectionStore,
    private readonly namespace: string,
    private readonly stepEvents: number,
  ) {}

  async add(events: readonly LedgerEvent[], offset: OffsetMark): Promise<void> {
    for (const event of events) this.events.push(event);
    const id = offsetField(offset.topic, offset.partition);
    const known = this.offsets.get(id);
    if (known === undefined || BigInt(known.nextOffset) < BigInt(offset.nextOffset))
      this.offsets.set(id, offset);
    if (this.events.length >= this.stepEvents) await this.flush();
  }

  flush(): Promise<void> {
    const events = this.events;
    const offsets = [...this.offsets.values()];
    this.events = [];
    this.offsets = new Map();
    this.writing = this.writing.then(async () => {
      if (events.length === 0 && offsets.length === 0) return;
      const outcome = await this.store.applyBatch(this.namespace, events, offsets);
      this.applied += outcome.applied;
      this.duplicates += outcome.duplicates;
    });
    return this.writing;
  }
}
