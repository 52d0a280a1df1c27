import type { KafkaAdminPort, LedgerConsumerFactory, LedgerRecord } from '@tally/ledger';
import { ulid } from 'ulid';

/** One partition's slice of a topic: offsets `start` (inclusive) to `end` (exclusive). */
export interface PartitionRange {
  readonly topic: string;
  readonly partition: number;
  readonly start: string;
  readonly end: string;
}

/** A range bound: a Kafka timestamp (epoch ms), or the log's current ends. */
export type RangeStart = number | 'earliest';
export type RangeEnd = number | 'latest';

/**
 * Where a time range lies in a topic. Start = the first record with a Kafka timestamp ≥ `from`:
 * records are published after their decision, so no event of the range comes earlier. End = the
 * high watermark seen now (fixed: the command ends even while traffic goes on), or, for a time,
 * the first record stamped after `to + lateMs` — `lateMs` leaves room for events published late
 * (a relay catching up after a Kafka outage); callers still filter on the event's own time.
 */
export async function planTopicRange(
  admin: KafkaAdminPort,
  topic: string,
  from: RangeStart,
  to: RangeEnd,
  lateMs = 0,
): Promise<PartitionRange[]> {
  const watermarks = await admin.fetchTopicOffsets(topic);
  const starts =
    from === 'earliest'
      ? new Map(watermarks.map((w) => [w.partition, w.low]))
      : new Map((await admin.fetchTopicOffsetsByTimestamp(topic, from)).map((o) => [o.partition, o.offset]));
  const ends =
    to === 'latest'
      ? undefined
      : new Map(
          (await admin.fetchTopicOffsetsByTimestamp(topic, to + lateMs)).map((o) => [o.partition, o.offset]),
        );
  return watermarks.map((w) => {
    const high = BigInt(w.high);
    const endAt = ends?.get(w.partition);
    const end = endAt === undefined || BigInt(endAt) > high ? high : BigInt(endAt);
    const startAt = BigInt(starts.get(w.partition) ?? w.low);
    const start = startAt < BigInt(w.low) ? BigInt(w.low) : startAt;
    return { topic, partition: w.partition, start: String(start), end: String(start > end ? start : end) };
  });
}

/** Records to read in total. */
export function rangeSize(ranges: readonly PartitionRange[]): number {
  return ranges.reduce((n, r) => n + Number(BigInt(r.end) - BigInt(r.start)), 0);
}

export type RangeHandler = (topic: string, partition: number, records: readonly LedgerRecord[]) => unknown;

export interface RangeReadOptions {
  /** Group id prefix; a fresh group per read, so nothing is committed anywhere that matters. */
  readonly purpose: string;
  /** Called after each handled batch with the records read so far. */
  readonly onProgress?: (read: number) => void;
  /** Partitions handled at once; the handler must then tolerate concurrent calls. */
  readonly concurrency?: number;
}

/**
 * Reads exactly the given ranges once and resolves when every partition reached its end. A fresh,
 * never-committing consumer group seeks each partition to its start; records outside a range, and
 * records seen twice (a fetch already in flight when the seek lands), are dropped here, so the
 * handler sees each record of the range exactly once, in offset order per partition.
 */
export async function readTopicRanges(
  consumers: LedgerConsumerFactory,
  ranges: readonly PartitionRange[],
  handler: RangeHandler,
  options: RangeReadOptions,
): Promise<number> {
  const pending = new Map<string, { next: bigint; end: bigint }>();
  for (const r of ranges) {
    if (BigInt(r.start) < BigInt(r.end))
      pending.set(`${r.topic}/${r.partition}`, { next: BigInt(r.start), end: BigInt(r.end) });
  }
  if (pending.size === 0) return 0;
  const topics = [...new Set(ranges.map((r) => r.topic))];
  const consumer = consumers.create({
    groupId: `tally-cli-${options.purpose}-${ulid().toLowerCase()}`,
    topics,
    fromBeginning: true,
    autoCommit: false,
    partitionsConsumedConcurrently: options.concurrency ?? 1,
    maxBytesPerPartition: 8 * 1024 * 1024,
    maxWaitTimeMs: 500,
  });
  let read = 0;
  const finished = new Promise<void>((resolve, reject) => {
    consumer.onCrash((error, restarting) => {
      if (!restarting) reject(error);
    });
    void consumer
      .run(async (batch, context) => {
        const state = pending.get(`${batch.topic}/${batch.partition}`);
        if (state === undefined) return;
        const records = batch.records.filter((r) => {
          const offset = BigInt(r.offset);
          return offset >= state.next && offset < state.end;
        });
        if (records.length > 0) {
          state.next = BigInt(records[records.length - 1].offset) + 1n;
          await handler(batch.topic, batch.partition, records);
          read += records.length;
          options.onProgress?.(read);
        }
        const last = batch.records[batch.records.length - 1];
        if (state.next >= state.end || (last !== undefined && BigInt(last.offset) >= state.end - 1n)) {
          pending.delete(`${batch.topic}/${batch.partition}`);
          if (pending.size === 0) resolve();
        }
        await context.heartbeat();
      })
      .then(() => {
        for (const r of ranges) {
          if (!pending.has(`${r.topic}/${r.partition}`)) continue;
          // A seek only skips what lies before the range. kafkajs throws when the group is between
          // sessions (a crash it is restarting from, under load): the read then starts from the
          // beginning (no commits, `fromBeginning`) and the filter above drops what is out of range.
          try {
            consumer.seek(r.topic, r.partition, r.start);
          } catch {
            return;
          }
        }
      }, reject);
  });
  try {
    await finished;
  } finally {
    // Stopped outside the handler: kafkajs waits for the running batch, so stopping inside would hang.
    await consumer.stop().catch(() => undefined);
    await consumer.disconnect().catch(() => undefined);
  }
  return read;
}
