import type { LedgerEvent } from '@tally/events';
import { endWithError, parseTraceparent, SpanKind, type Tracing } from '@tally/observability';

/**
 * The projector's span of one traced record (`StepHooks.traceEvent`): a child of the record's
 * `traceparent` (the relay's span), from validation until the atomic Redis step that applies the
 * record (its dedup mark and its partition's offset included) is written.
 */
export function projectionSpan(
  tracing: Tracing,
  groupId: string,
): (event: LedgerEvent) => ((error?: unknown) => void) | undefined {
  return (event) => {
    // Another producer's unreadable context starts no trace of its own here: nothing to join.
    if (parseTraceparent(event.traceparent) === undefined) return undefined;
    const span = tracing.start('tally.projector.project', SpanKind.CONSUMER, event.traceparent);
    if (span === undefined) return undefined;
    span.setAttribute('tally.decision_id', event.id);
    span.setAttribute('tally.event_type', event.type);
    span.setAttribute('messaging.system', 'kafka');
    span.setAttribute('messaging.consumer.group.name', groupId);
    if (typeof event.data.tenant === 'string') span.setAttribute('tally.tenant', event.data.tenant);
    return (error) => (error === undefined ? span.end() : endWithError(span, error));
  };
}
