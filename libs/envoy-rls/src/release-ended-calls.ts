import { subscribe } from 'node:diagnostics_channel';
import type { EventEmitter } from 'node:events';

/**
 * Why a gRPC call outlived the young generation, and what is dropped once it has ended.
 *
 * Without any of Tally's code, a bare Node HTTP/2 server keeps every stream it served through
 * scavenges (≈ 1.4 KB each): a stream is a Node `Writable`, and V8 allocates a function literal
 * assigned to a property (`WritableState`'s `this.onwrite = (er) => …`) in the old generation, whose
 * closure context holds the stream — the likely reason, shown for unoptimized code. Whatever the
 * stream's listeners hold (the server's call, its request, the handler's promises, the decisions and
 * their Redis commands) then waits for the next mark-compact too, and a worker grew to 250–270 MB
 * under load (docs/benchmarks.md, "Decision API memory"). Once a stream has closed, nothing needs its
 * listeners: dropping them (with `leanPipeline` in @tally/redis) halved what a call leaves behind.
 */

/** Node publishes every server-side HTTP/2 stream it creates here (Node ≥ 24.x; else never). */
const STREAM_CREATED = 'http2.server.stream.created';

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

function ignore(): void {}
