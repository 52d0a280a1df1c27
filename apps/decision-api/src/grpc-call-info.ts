import { Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import { REQUEST_ID_HEADER, requestIdOf } from '@tally/observability';

/** What a `ShouldRateLimit` call brings besides its request: its id and the caller's trace context. */
export interface GrpcCallInfo {
  /** The caller's `x-request-id` metadata when safe (see `requestIdOf`), else a new id. */
  readonly requestId: string;
  /** The caller's `traceparent` metadata, as sent (the tracer checks it). */
  readonly traceparent: string | Buffer | undefined;
}

/**
 * Reads the call's request id and trace context, and sends the id back at once in the response's
 * initial metadata (`x-request-id`), so a caller sees it on refusals and errors too.
 */
export function callInfo(call: ServerUnaryCall<unknown, unknown>): GrpcCallInfo {
  const requestId = requestIdOf(call.metadata.get(REQUEST_ID_HEADER)[0]);
  const echo = new Metadata();
  echo.set(REQUEST_ID_HEADER, requestId);
  call.sendMetadata(echo);
  return { requestId, traceparent: call.metadata.get('traceparent')[0] };
}
