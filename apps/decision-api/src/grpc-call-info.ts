import { Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import { REQUEST_ID_HEADER, requestIdOf } from '@tally/observability';

/** What a `ShouldRateLimit` call brings besides its request: its id and the caller's trace context. */
export interface GrpcCallInfo {
  /** The caller's `x-request-id` metadata when safe (see `requestIdOf`), else a new id. */
  readonly requestId: string;
  /** The caller's `traceparent` metadata, as sent (the tracer checks it). */
  readonly traceparent: string | Buffer | undefined;
}

/** Reads the call's request id and trace context. */
export function callInfo(call: ServerUnaryCall<unknown, unknown>): GrpcCallInfo {
  const requestId = requestIdOf(call.metadata.get(REQUEST_ID_HEADER)[0]);
  return { requestId, traceparent: call.metadata.get('traceparent')[0] };
}

/**
 * Sends the call's id back in the response's initial metadata (`x-request-id`), so a caller sees it
 * on every answer the handler gives, errors included. Called just before the answer, not when the
 * call arrives: grpc-js writes initial metadata as soon as it is sent, so headers sent on arrival
 * leave in a socket write of their own, while headers sent with the answer share its write
 * (HEADERS, DATA and trailers in one `writev`): one write fewer per call.
 */
export function echoRequestId(call: ServerUnaryCall<unknown, unknown>, info: GrpcCallInfo): void {
  // An ended call (cancelled by the caller, past its deadline) has nobody to answer, and its inner
  // call is let go of once it has ended (release-ended-calls.ts): `sendMetadata` would then throw.
  if (call.cancelled) return;
  const echo = new Metadata();
  echo.set(REQUEST_ID_HEADER, info.requestId);
  call.sendMetadata(echo);
}
