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
  /**
   * Where the record came from, not where it now lies: the projector's `topic/partition @offset` of the
   * record it refused, the relay's outbox stream and entry id, or the denial hash's shard and field.
   */
  readonly origin: string | null;
}

/** The origin of a dead letter, from the projector's headers or the relay's JSON value. */
export function originOf(headers: Readonly<Record<string, string>>, value: Buffer | null): string | null {
  const topic = headers['tally-dlq-topic'];
  if (topic !== undefined)
    return `${topic}/${headers['tally-dlq-partition'] ?? '?'} @${headers['tally-dlq-offset'] ?? '?'}`;
  let body: unknown;
  try {
    body = value === null ? null : JSON.parse(value.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { stream, id, shard, field } = body as Record<string, unknown>;
  if (typeof stream === 'string' && typeof id === 'string') return `outbox ${stream} entry ${id}`;
  if (typeof shard === 'number' && typeof field === 'string') return `denials shard ${shard} field ${field}`;
  return null;
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
          origin: originOf(r.headers, r.value),
        });
    },
    { purpose: 'dead-letters' },
  );
  return letters
    .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
    .slice(0, limit);
}
