import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { Text, ULID_PATTERN } from './event-parts.v1';
import { CLOUDEVENTS_SPECVERSION, EVENT_DATA_CONTENT_TYPE } from './event-types';

/** W3C Trace Context `traceparent`, version 00 (lower-case hex, as the specification writes it). */
const TRACEPARENT_PATTERN = '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$';
/** The `traceparent` form Tally writes (builders leave out anything else); consumers read any string. */
export const TRACEPARENT = new RegExp(TRACEPARENT_PATTERN);

/**
 * The CloudEvents 1.0 structured-mode envelope shared by Tally's events, around one event type's
 * `data`. Unknown extension attributes are tolerated on consume (CloudEvents forward compatibility),
 * so the schema does not close the object.
 */
export function cloudEventV1<T extends string, D extends TObject>(type: T, data: D) {
  const envelope = {
    specversion: Type.Literal(CLOUDEVENTS_SPECVERSION, { description: 'CloudEvents version; always `1.0`.' }),
    id: Type.String({
      pattern: ULID_PATTERN.source,
      description:
        'Decision id (ULID), or the deterministic ULID-shaped id of a coalesced denial: consumers deduplicate on it.',
    }),
    source: Text('Producer of the event: `tally/decision-api`.'),
    type: Type.Literal(type, { description: `Always \`${type}\`.` }),
    time: Type.String({
      format: 'date-time',
      description: 'Redis server time of the decision, RFC 3339 UTC with milliseconds.',
    }),
    subject: Type.Optional(
      Text('`<policy>/<key>` of the first (binding) policy; absent when no policy applied.'),
    ),
    datacontenttype: Type.Literal(EVENT_DATA_CONTENT_TYPE, { description: 'Media type of `data`.' }),
    // No pattern: a consumer must never refuse (dead-letter) a ledger record for its trace context;
    // one it cannot read is ignored. Tally writes only values that match TRACEPARENT.
    traceparent: Type.Optional(
      Type.String({
        description:
          "CloudEvents distributed-tracing extension: the W3C `traceparent` (`00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`) of the span that published the record (the relay's, child of the decision's). Only on records of sampled decisions (tracing on); absent otherwise. Consumers ignore a value they cannot read.",
      }),
    ),
    data,
  } satisfies TProperties;
  return Type.Object(envelope, { description: `The CloudEvents 1.0 envelope of \`${type}\`.` });
}
