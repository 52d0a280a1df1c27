import { parseLedgerEvent, type DeadLetterHeadersV1, type LedgerEvent } from '@tally/events';
import type { LedgerBatch, LedgerMessage, LedgerRecord } from '@tally/ledger';

/** A record the projector cannot apply, and why: what goes to the dead-letter topic. */
export interface Rejected {
  readonly record: LedgerRecord;
  readonly reason: string;
}

export interface SortedBatch {
  /** Valid events, in offset order. */
  readonly events: LedgerEvent[];
  /** The record offset of each event of `events`, index for index. */
  readonly offsets: string[];
  /** The record each event of `events` was parsed from, index for index (see `StepWriter.add`). */
  readonly records: LedgerRecord[];
  readonly rejected: Rejected[];
}

/**
 * Validates every record of a batch (DESIGN §4, STYLE rule 5). A record that is not a valid event of
 * the type its topic carries is rejected with its reason, never dropped: it goes to the dead-letter
 * topic before the batch's offsets move past it. `expectedTypes` maps a topic to its event type, or
 * the types it carries (the decision topic also carries override changes); a topic not in the map
 * accepts any ledger type.
 */
export function sortBatch(
  batch: Pick<LedgerBatch, 'topic' | 'records'>,
  expectedTypes: Readonly<Record<string, string | readonly string[]>>,
): SortedBatch {
  const events: LedgerEvent[] = [];
  const offsets: string[] = [];
  const valid: LedgerRecord[] = [];
  const rejected: Rejected[] = [];
  const expected = expectedTypes[batch.topic];
  for (const record of batch.records) {
    if (record.value === null || record.value.length === 0) {
      rejected.push({ record, reason: 'empty message' });
      continue;
    }
    const parsed = parseLedgerEvent(record.value);
    if (!parsed.ok) rejected.push({ record, reason: parsed.reason });
    else if (expected !== undefined && !belongs(parsed.event.type, expected)) {
      rejected.push({ record, reason: `type: ${parsed.event.type} does not belong on ${batch.topic}` });
    } else {
      events.push(parsed.event);
      offsets.push(record.offset);
      valid.push(record);
    }
  }
  return { events, offsets, records: valid, rejected };
}

/**
 * The dead-letter record of a rejected one: the original bytes, key and headers (the raw material to
 * fix and replay it), plus where it came from and why, as `tally-dlq-*` headers like the relay's.
 */
export function deadLetterOf(
  batch: Pick<LedgerBatch, 'topic' | 'partition'>,
  rejected: Rejected,
  groupId: string,
): LedgerMessage {
  const { record, reason } = rejected;
  return {
    key: record.key ?? `${batch.topic}:${batch.partition}`,
    value: record.value ?? Buffer.alloc(0),
    headers: {
      ...record.headers,
      ...({
        'tally-dlq-reason': reason,
        'tally-dlq-source': 'projector',
        'tally-dlq-group': groupId,
        'tally-dlq-topic': batch.topic,
        'tally-dlq-partition': String(batch.partition),
        'tally-dlq-offset': record.offset,
        'tally-dlq-timestamp': record.timestamp,
      } satisfies DeadLetterHeadersV1),
    },
  };
}

/** Groups of messages under `maxBytes` each (Kafka refuses record batches above its message limit). */
export function chunkMessages(messages: readonly LedgerMessage[], maxBytes: number): LedgerMessage[][] {
  const chunks: LedgerMessage[][] = [];
  let current: LedgerMessage[] = [];
  let size = 0;
  for (const message of messages) {
    const bytes = Buffer.byteLength(message.value) + Buffer.byteLength(message.key) + 256;
    if (current.length > 0 && size + bytes > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function belongs(type: string, expected: string | readonly string[]): boolean {
  return typeof expected === 'string' ? type === expected : expected.includes(type);
}
