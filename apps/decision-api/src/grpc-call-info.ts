import type { IncomingHttpHeaders } from 'node:http2';
import { firstValue } from '@tally/envoy-rls';
import { REQUEST_ID_HEADER, requestIdOf } from '@tally/observability';

/** What a `ShouldRateLimit` call brings besides its request: its id and the caller's trace context. */
export interface GrpcCallInfo {
  /** The caller's `x-request-id` metadata when safe (see `requestIdOf`), else a new id. */
  readonly requestId: string;
  /** The caller's `traceparent` metadata, as sent (the tracer checks it). */
  readonly traceparent: string | undefined;
}

/** Reads the call's request id and trace context from its headers (gRPC metadata are HTTP/2 headers). */
export function callInfo(headers: IncomingHttpHeaders): GrpcCallInfo {
  return {
    requestId: requestIdOf(firstValue(headers[REQUEST_ID_HEADER])),
    traceparent: firstValue(headers.traceparent),
  };
}
