import {
  denialEvent,
  isDenyReason,
  OutboxEntryError,
  parseDenialField,
  type DeadLetterHeadersV1,
} from '@tally/events';
import { TOPICS, type LedgerMessage, type TopicMessages } from '@tally/ledger';
import { eventMessage } from './outbox-batch';

/** What one drain of one shard's denial hash becomes. */
export interface DenialDrainPlan {
  readonly topicMessages: TopicMessages[];
  /** Hash fields to HDEL once Kafka confirmed the messages (count, sample and results fields). */
  readonly fields: readonly string[];
  /** Coalesced decision events (one per second, policy, key and reason). */
  readonly events: number;
  /** Denials those events stand for (the sum of their counts). */
  readonly denials: number;
  readonly deadLettered: number;
}

interface Group {
  count?: string;
  p?: string;
  r?: string;
  readonly fields: string[];
}

/**
 * Pure: the coalesced denial events of every second strictly older than `nowSecond` (Redis time).
 * The current second is left alone: the decision script may still be counting into it. Each event id
 * is a function of (shard, second, field), so draining the same field twice (a crash between produce
 * and HDEL) yields the same event, which the projector deduplicates.
 */
export function planDenialDrain(
  shard: number,
  nowSecond: number,
  hash: Readonly<Record<string, string>>,
): DenialDrainPlan {
  const groups = new Map<string, Group>();
  const dead: LedgerMessage[] = [];
  const deadFields: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const parts = parseDenialField(field);
    if (parts === undefined) {
      // Not written by the engine's format: it would sit in the hash forever; park it instead.
      dead.push(deadDenial(shard, field, 'unparseable denial field', { [field]: value }));
      deadFields.push(field);
      continue;
    }
    if (parts.epochSecond >= nowSecond) continue;
    const group = groups.get(parts.countField) ?? { fields: [] };
    group.fields.push(field);
    if (parts.part === 'count') group.count = value;
    else if (parts.part === 'payload') group.p = value;
    else group.r = value;
    groups.set(parts.countField, group);
  }
  const decisions: LedgerMessage[] = [];
  let denials = 0;
  for (const [countField, group] of groups) {
    const parts = parseDenialField(countField);
    try {
      if (parts === undefined) throw new OutboxEntryError('unparseable denial field');
      if (group.count === undefined) throw new OutboxEntryError('denial sample without a count');
      if (group.p === undefined) throw new OutboxEntryError('denial count without its sample payload');
      if (!isDenyReason(parts.reason)) throw new OutboxEntryError(`unknown deny reason ${parts.reason}`);
      const count = Number(group.count);
      decisions.push(
        eventMessage(
          denialEvent({
            shard,
            second: parts.epochSecond,
            field: countField,
            count,
            p: group.p,
            reason: parts.reason,
            ...(group.r === undefined ? {} : { r: group.r }),
          }),
        ),
      );
      denials += count;
    } catch (error) {
      if (!(error instanceof OutboxEntryError)) throw error;
      const raw = Object.fromEntries(group.fields.map((f) => [f, hash[f] ?? '']));
      dead.push(deadDenial(shard, countField, error.message, raw));
    }
  }
  const topicMessages = [
    { topic: TOPICS.decision, messages: decisions },
    { topic: TOPICS.deadLetter, messages: dead },
  ].filter((t) => t.messages.length > 0);
  return {
    topicMessages,
    fields: [...deadFields, ...[...groups.values()].flatMap((g) => g.fields)],
    events: decisions.length,
    denials,
    deadLettered: dead.length,
  };
}

function deadDenial(
  shard: number,
  field: string,
  reason: string,
  fields: Record<string, string>,
): LedgerMessage {
  return {
    key: field,
    value: JSON.stringify({ source: 'tally-relay', shard, field, reason, fields }),
    headers: { 'tally-dlq-reason': reason, 'tally-dlq-source': 'denials' } satisfies DeadLetterHeadersV1,
  };
}
