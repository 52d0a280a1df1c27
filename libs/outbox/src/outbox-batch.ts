import {
  CLOUDEVENTS_CONTENT_TYPE,
  kafkaKeyOf,
  leaseEventFromOutbox,
  ledgerEventFromOutbox,
  OutboxEntryError,
  overrideEventFromOutbox,
  USAGE_EVENT_TYPE,
  usageRecordFromOutbox,
  type DeadLetterHeadersV1,
  type DecisionEventV2,
  type LeaseEventV1,
  type OverrideEventV1,
  type UsageEventV1,
} from '@tally/events';
import { TOPICS, type LedgerMessage, type TopicMessages } from '@tally/ledger';
import type { RecordTracer } from './record-spans';
import type { StreamEntry } from './stream-entries';

/** What one read batch becomes: the Kafka messages, and the stream entries they stand for. */
export interface OutboxBatchPlan {
  /** One element per topic with messages, for one `sendBatch`. */
  readonly topicMessages: TopicMessages[];
  /** Per stream, the entry ids to XACK + XDEL once Kafka confirmed every message above. */
  readonly acks: ReadonlyMap<string, readonly string[]>;
  /** Messages per topic (metrics). */
  readonly published: Readonly<Record<string, number>>;
  /** Entries that could not become events and go to the dead-letter topic instead. */
  readonly deadLettered: number;
}

/**
 * Pure: turns outbox entries into records, at most one per entry, each entry decoded once. A decision
 * entry (allowed or degraded, with a cost) gives its usage event and nothing else: that record
 * carries every fact of the decision, the audit trail's included (docs/adr/0009); a denied entry,
 * which the engine does not write (denials are coalesced in the denial hashes), would give its
 * `tally.decision.v2` event. A release entry gives a lease event; an override change an override
 * event on the decision topic (keyed by the tenant like decisions). An entry that is not a valid
 * outbox entry is dead-lettered with its reason and its raw fields: acknowledged like the others (a
 * poison entry must not stall its shard forever) but never dropped silently. `trace`: see
 * `RecordSpans`; called only for an entry that carries a decision's `traceparent`.
 */
export function planOutboxBatch(entries: readonly StreamEntry[], trace?: RecordTracer): OutboxBatchPlan {
  const usage: LedgerMessage[] = [];
  const decision: LedgerMessage[] = [];
  const lease: LedgerMessage[] = [];
  const dead: LedgerMessage[] = [];
  const acks = new Map<string, string[]>();
  for (const entry of entries) {
    const ids = acks.get(entry.stream) ?? [];
    ids.push(entry.id);
    acks.set(entry.stream, ids);
    const fields = entry.fields;
    try {
      // A release entry (written by release.lua) carries `l` instead of a decision's `p`.
      if (fields.l !== undefined) {
        lease.push(eventMessage(leaseEventFromOutbox({ l: fields.l, t: fields.t ?? '' })));
        continue;
      }
      // An override change (written by override-write.lua) carries `o` (its head) instead.
      if (fields.o !== undefined) {
        const { o, b = '', a = '', n = '', t = '' } = fields;
        decision.push(eventMessage(overrideEventFromOutbox({ o, b, a, n, t })));
        continue;
      }
      // The common entry, allowed and untraced, written straight from its text (usage-record.ts);
      // undefined for anything else, which the reference builder below decides.
      const record =
        trace === undefined && fields.p !== undefined
          ? usageRecordFromOutbox(fields.p, fields.t ?? '', fields.r ?? '')
          : undefined;
      if (record !== undefined) {
        usage.push({ key: record.key, value: record.value, headers: EVENT_HEADERS });
        continue;
      }
      let event = ledgerEventFromOutbox({ p: fields.p ?? '', t: fields.t ?? '', r: fields.r ?? '' });
      const usageEvent = event.type === USAGE_EVENT_TYPE;
      if (trace !== undefined && event.traceparent !== undefined) {
        const topic = usageEvent ? TOPICS.usage : TOPICS.decision;
        event = { ...event, traceparent: trace(event.traceparent, event, topic) };
      }
      (usageEvent ? usage : decision).push(eventMessage(event));
    } catch (error) {
      if (!(error instanceof OutboxEntryError)) throw error;
      dead.push(deadLetter(entry, error.message));
    }
  }
  const topicMessages = [
    { topic: TOPICS.usage, messages: usage },
    { topic: TOPICS.decision, messages: decision },
    { topic: TOPICS.lease, messages: lease },
    { topic: TOPICS.deadLetter, messages: dead },
  ].filter((t) => t.messages.length > 0);
  return {
    topicMessages,
    acks,
    published: Object.fromEntries(topicMessages.map((t) => [t.topic, t.messages.length])),
    deadLettered: dead.length,
  };
}

/** Every event record's headers (one shared object: nothing downstream writes to it). */
const EVENT_HEADERS: Readonly<Record<string, string>> = { 'content-type': CLOUDEVENTS_CONTENT_TYPE };

/** The Kafka record of an event, its value encoded once. */
export function eventMessage(
  event: UsageEventV1 | DecisionEventV2 | LeaseEventV1 | OverrideEventV1,
): LedgerMessage {
  return {
    key: kafkaKeyOf(event),
    value: JSON.stringify(event),
    headers: EVENT_HEADERS,
  };
}

/** A record of the dead-letter topic: where it came from, why, and the raw material to replay it. */
export function deadLetter(entry: StreamEntry, reason: string): LedgerMessage {
  return {
    key: entry.stream,
    value: JSON.stringify({
      source: 'tally-relay',
      stream: entry.stream,
      id: entry.id,
      reason,
      fields: entry.fields,
    }),
    headers: { 'tally-dlq-reason': reason, 'tally-dlq-source': 'outbox' } satisfies DeadLetterHeadersV1,
  };
}

/**
 * Splits messages into sendBatch calls of at most `maxBytes` (values and keys), keeping each topic's
 * order. Kafka refuses a record batch above `message.max.bytes` (1 MiB by default), and kafkajs puts
 * all of one partition's messages of a call into one record batch: one busy tenant (one partition)
 * could otherwise make a batch that Kafka rejects forever. A single message is never split.
 */
export function chunkTopicMessages(
  topicMessages: readonly TopicMessages[],
  maxBytes: number,
): TopicMessages[][] {
  const chunks: TopicMessages[][] = [];
  let current = new Map<string, LedgerMessage[]>();
  let size = 0;
  const flush = (): void => {
    if (current.size > 0) chunks.push([...current].map(([topic, messages]) => ({ topic, messages })));
    current = new Map();
    size = 0;
  };
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const bytes = Buffer.byteLength(message.value) + Buffer.byteLength(message.key) + 64;
      if (size > 0 && size + bytes > maxBytes) flush();
      const list = current.get(topic) ?? [];
      list.push(message);
      current.set(topic, list);
      size += bytes;
    }
  }
  flush();
  return chunks;
}
