/**
 * W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/#traceparent-header),
 * version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. Pure, so the relay and the
 * projector can check a value read from Redis or Kafka before it becomes a parent.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Bit 0 (`01`): the caller recorded its span, and asks downstream to record theirs. */
  readonly sampled: boolean;
  readonly flags: number;
}

/** The parts of a valid `traceparent`, or undefined (malformed, all-zero ids, unknown version). */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (m === null || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return undefined;
  const flags = parseInt(m[3], 16);
  return { traceId: m[1], spanId: m[2], flags, sampled: (flags & 1) === 1 };
}

/** The `traceparent` of a span context. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}
