import { Injectable, Optional } from '@nestjs/common';
import type { DecisionEventV2, UsageEventV1 } from '@tally/events';
import { endWithError, sampledTraceparent, SpanKind, Tracing, type Span } from '@tally/observability';

/** Called while a batch is planned, for each record of a traced decision: the record's `traceparent`. */
export type RecordTracer = (parent: string, event: UsageEventV1 | DecisionEventV2, topic: string) => string;

/**
 * The relay's spans: one per record whose outbox entry carries a decision's `traceparent` (only
 * sampled decisions' entries do), a child of the decision's span, from planning the record until
 * Kafka confirmed it. The record then carries this span's `traceparent`, so the projector's span is
 * its child. Tracing off, `tracer` is undefined and a batch is planned exactly as without tracing
 * (the record keeps the decision's `traceparent`, so the projector's span still joins the trace).
 */
@Injectable()
export class RecordSpans {
  /** Spans started since the last `take`: those of the batch being planned. */
  private open: Span[] = [];
  readonly tracer?: RecordTracer;

  constructor(@Optional() tracing?: Tracing) {
    if (tracing?.enabled !== true) return;
    this.tracer = (parent, event, topic) => {
      const span = tracing.start('tally.relay.publish', SpanKind.PRODUCER, parent);
      if (span === undefined) return parent;
      span.setAttribute('tally.decision_id', event.id);
      span.setAttribute('messaging.system', 'kafka');
      span.setAttribute('messaging.destination.name', topic);
      if (typeof event.data.tenant === 'string') span.setAttribute('tally.tenant', event.data.tenant);
      this.open.push(span);
      return sampledTraceparent(span) ?? parent;
    };
  }

  /** The spans of the batch just planned; the next batch's start afresh. */
  take(): readonly Span[] {
    if (this.open.length === 0) return NONE;
    const spans = this.open;
    this.open = [];
    return spans;
  }
}

const NONE: readonly Span[] = [];

/** Ends a batch's spans once its produce settled: confirmed by Kafka, or abandoned at shutdown. */
export function endRecordSpans(spans: readonly Span[], published: boolean | Error): void {
  for (const span of spans) {
    if (published === true) span.end();
    else
      endWithError(span, published === false ? 'abandoned at shutdown: the entry stays pending' : published);
  }
}
