import type { Decision } from '@tally/engine';
import { endWithError, sampledTraceparent, SpanKind, type Span, type Tracing } from '@tally/observability';

/** The span name of one decision call (HTTP `POST /v1/decisions`, `:batch`, gRPC `ShouldRateLimit`). */
const DECIDE_SPAN = 'tally.decide';

/**
 * The decision API's one tracing hook: a span per decision call, a child of the caller's
 * `traceparent` when it sent one. Tracing off, `tracing.start` is undefined before it allocates
 * anything and `decide` runs as it would without tracing. A sampled span's `traceparent` goes into
 * the decisions' outbox entries (`decide(traceparent)`), so the relay's and the projector's spans
 * join the same trace. Attributes: ids, the tenant, the policies and the outcome; never a selector
 * value beyond the tenant, a token or a request body.
 */
export async function traceDecisions<T extends Decision | readonly (Decision | null)[]>(
  tracing: Tracing,
  call: { transport: 'http' | 'grpc'; traceparent: unknown; requestId: string; tenant: unknown },
  decide: (traceparent?: string) => Promise<T>,
): Promise<T> {
  const span = tracing.start(
    DECIDE_SPAN,
    SpanKind.SERVER,
    typeof call.traceparent === 'string' ? call.traceparent : undefined,
  );
  if (span === undefined) return decide();
  span.setAttribute('tally.transport', call.transport);
  span.setAttribute('tally.request_id', call.requestId);
  if (typeof call.tenant === 'string') span.setAttribute('tally.tenant', call.tenant);
  try {
    const result = await decide(sampledTraceparent(span));
    describe(span, result);
    span.end();
    return result;
  } catch (error) {
    endWithError(span, error);
    throw error;
  }
}

function describe(span: Span, result: Decision | readonly (Decision | null)[]): void {
  const decisions = (Array.isArray(result) ? result : [result]) as readonly (Decision | null)[];
  const decided = decisions.filter((d): d is Decision => d !== null);
  span.setAttribute('tally.decision_count', decided.length);
  span.setAttribute(
    'tally.decision_ids',
    decided.map((d) => d.decision_id),
  );
  span.setAttribute(
    'tally.outcomes',
    decided.map((d) => d.kind),
  );
  span.setAttribute('tally.policies', [...new Set(decided.flatMap((d) => d.policies.map((p) => p.name)))]);
  if (decided.length === 1) {
    span.setAttribute('tally.decision_id', decided[0].decision_id);
    span.setAttribute('tally.outcome', decided[0].kind);
  }
}
