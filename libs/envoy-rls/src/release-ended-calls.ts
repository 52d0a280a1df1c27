import { subscribe } from 'node:diagnostics_channel';
import type { EventEmitter } from 'node:events';

/**
 * Why a gRPC call outlived the young generation, and what is dropped once it has ended.
 *
 * Each gRPC call left its whole object graph (≈ 14 KB: the HTTP/2 stream, grpc-js's call objects,
 * the handler's promises, the decisions and their Redis commands) to the next mark-compact, and a
 * worker grew to 250–270 MB under load (docs/benchmarks.md, "Decision API memory"). Without any of
 * Tally's code, a bare Node HTTP/2 server keeps every stream it served through scavenges (≈ 1.4 KB
 * each) and a bare grpc-js server every call (≈ 5.4 KB): both are Node `Writable`s, and V8 allocates
 * a function literal assigned to a property (`WritableState`'s `this.onwrite = (er) => …`) in the
 * old generation, whose closure context holds the stream — the likely reason, shown for unoptimized
 * code. What a call needs pinned is two objects: Node's HTTP/2 stream, whose listeners are grpc-js's
 * closures over the call, and grpc-js's unary call object (the handler's `call`), which holds the
 * intercepting call, its metadata and its request. Once the call has ended, neither needs them:
 * dropping them (with `leanPipeline` in @tally/redis) halved what a call leaves behind.
 */

/** Node publishes every server-side HTTP/2 stream it creates here (Node ≥ 24.x; else never). */
const STREAM_CREATED = 'http2.server.stream.created';
/** grpc-js's unary call object: what it holds of the call. */
const CALL_FIELDS = ['call', 'metadata', 'request'] as const;

let installed = false;

/**
 * From now on, every HTTP/2 server stream of this process drops its listeners once it has closed
 * (an `error` listener that does nothing stays: nothing is emitted on a closed stream, and nothing
 * emitted later could then throw). Idempotent.
 */
export function releaseClosedStreams(): void {
  if (installed) return;
  installed = true;
  subscribe(STREAM_CREATED, onStreamCreated);
}

/** grpc-js's unary `call` lets go of the call once it has ended (grpc-js ends every call with `cancelled`). */
export function releaseWhenEnded(call: EventEmitter): void {
  call.once('cancelled', onCallEnded);
}

function onStreamCreated(message: unknown): void {
  (message as { stream: EventEmitter }).stream.once('close', onStreamClosed);
}

// After the emit: the other `close` listeners run first, and whatever they schedule.
function onStreamClosed(this: EventEmitter): void {
  setImmediate(dropListeners, this);
}

function dropListeners(stream: EventEmitter): void {
  stream.removeAllListeners();
  stream.on('error', ignore);
}

function onCallEnded(this: EventEmitter): void {
  setImmediate(dropCall, this);
}

function dropCall(call: EventEmitter): void {
  for (const field of CALL_FIELDS) Reflect.set(call, field, undefined);
}

function ignore(): void {}
