import { TOPICS, type Ledger } from '@tally/ledger';
import { readTopicRanges, type PartitionRange } from './topic-range';

/** One record of `tally.dlq.v1`, by its headers (the value is not parsed: it is what could not be). */
export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** ISO 8601, the record's Kafka timestamp. */
  readonly timestamp: string;
  /** `tally-dlq-source`: `outbox`, `denials` or `projector`. */
  readonly source: string;
  /** `tally-dlq-reason`: why it is there. */
  readonly reason: string;
  readonly key: string | null;
}

/**
 * The newest dead letters, newest first: the last `limit` records of every partition, merged and cut
 * to `limit`. Reads with a fresh, never-committing group (`readTopicRanges`), so looking changes nothing.
 */
export async function recentDeadLetters(
  ledger: Pick<Ledger, 'admin' | 'consumers'>,
  limit: number,
  topic: string = TOPICS.deadLetter,
): Promise<DeadLetter[]> {
  const watermarks = await ledger.admin.fetchTopicOffsets(topic);
  const ranges: PartitionRange[] = watermarks.map((w) => {
    const high = BigInt(w.high);
    const tail = high - BigInt(limit);
    const start = tail > BigInt(w.low) ? tail : BigInt(w.low);
    return { topic, partition: w.partition, start: String(start), end: String(high) };
  });
  const letters: DeadLetter[] = [];
  await readTopicRanges(
    ledger.consumers,
    ranges,
    (t, partition, records) => {
      for (const r of records)
        letters.push({
          topic: t,
          partition,
          offset: r.offset,
          timestamp: new Date(Number(r.timestamp)).toISOString(),
          source: r.headers['tally-dlq-source'] ?? 'unknown',
          reason: r.headers['tally-dlq-reason'] ?? 'unknown',
          key: r.key,
        });
    },
    { purpose: 'dead-letters' },
  );
  return letters
    .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
    .slice(0, limit);
}
