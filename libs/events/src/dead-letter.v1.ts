import { Type, type Static } from '@sinclair/typebox';
import { OneOf, Opt, Text } from './event-parts.v1';

/** Who dead-lettered a record: the relay (an outbox entry, a denial-hash field) or the projector. */
export const DEAD_LETTER_SOURCES = ['outbox', 'denials', 'projector'] as const;
export type DeadLetterSource = (typeof DEAD_LETTER_SOURCES)[number];

const projectorOnly = (what: string) => Opt(Type.String({ description: `Projector only: ${what}` }));

/**
 * The headers of a `tally.dlq.v1` record, written by the relay and the projector: why, and where
 * the record came from. A projector record also keeps the original record's own headers beside them.
 */
export const DeadLetterHeadersV1 = Type.Object(
  {
    'tally-dlq-reason': Text('Why the record could not become, or be applied as, a valid event.'),
    'tally-dlq-source': OneOf(
      DEAD_LETTER_SOURCES,
      '`outbox` (relay: an invalid outbox entry), `denials` (relay: an unreadable denial-hash field) or `projector` (a record that is no valid event of its topic).',
    ),
    'tally-dlq-group': projectorOnly('the consumer group that rejected the record.'),
    'tally-dlq-topic': projectorOnly('the topic the record was read from.'),
    'tally-dlq-partition': projectorOnly('its partition, decimal.'),
    'tally-dlq-offset': projectorOnly('its offset, decimal.'),
    'tally-dlq-timestamp': projectorOnly('its Kafka timestamp, epoch milliseconds, decimal.'),
  },
  { title: 'tally.dlq.v1 headers', description: 'Why a record was dead-lettered, and where it came from.' },
);
export type DeadLetterHeadersV1 = Static<typeof DeadLetterHeadersV1>;
