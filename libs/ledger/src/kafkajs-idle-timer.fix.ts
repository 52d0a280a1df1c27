/**
 * Two timers kafkajs 2.2.4 (its last release) keeps running on every broker connection of an idle
 * process, each replaced so that it runs only while there is something for it to do.
 *
 * 1. The pending-requests check. kafkajs re-arms a timer on every connection for as long as the process
 * lives: `RequestQueue.checkPendingRequests`, which runs on every response, ends by calling
 * `scheduleCheckPendingRequests`, which arms `setTimeout(check, throttledUntil - Date.now())` even
 * when nothing is pending and nothing is throttled; the delay is then negative, Node runs it after
 * 1 ms, and the check re-arms it. Each broker connection of each client wakes the process about a
 * thousand times a second: tens of ms of CPU per second of an idle relay or projector, and Node 24
 * prints a TimeoutNegativeWarning (tulios/kafkajs#1556, #1704, #1751; open, unreleased fixes).
 *
 * The replacement keeps every case in which the timer does something: requests pending (re-check
 * when the throttle ends, else after kafkajs's 10 ms interval) and a throttle still running (check at
 * its end). With nothing pending and no throttle it arms nothing: the next `push` of a request that
 * cannot go at once schedules the check again, as it always did.
 *
 * 2. The request-timeout check. From its connect until its disconnect, a connection runs a 100 ms
 * interval (`scheduleRequestTimeoutCheck`) that times out requests in flight too long: ten wake-ups a
 * second per connection with nothing in flight (≈ 1 ms of CPU per second of an idle relay). The
 * replacement runs the same check (same period, same test per request, same "destroy once
 * disconnected") from the moment a request is in flight until a tick finds none in flight; the next
 * request sent arms it again.
 */
const PATCHED = Symbol.for('tally.kafkajs.idleTimerFix');

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** What the request-timeout check reads of a RequestQueue and of its requests in flight. */
export interface TimeoutCheckedQueue {
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  requestTimeoutIntervalId?: ReturnType<typeof setInterval> | null;
  isConnected(): boolean;
  destroy(): void;
}

interface RequestQueuePrototype extends RequestQueueInternals, TimeoutCheckedQueue {
  sendSocketRequest(request: unknown): void;
  scheduleRequestTimeoutCheck(): void;
  [PATCHED]?: true;
}

/** kafkajs's own interval between checks while requests wait for an in-flight slot. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** Applied once per process, before any kafkajs client is used (see createKafka). */
export function fixKafkajsIdleTimer(): void {
  // A deep import of a pinned, unmaintained package: its internals will not move under us.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RequestQueue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueuePrototype };
  const proto = RequestQueue.prototype;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  proto.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  // kafkajs's own methods, called with the queue as `this` by the replacements.
  const send: (this: RequestQueuePrototype, r: unknown) => void = Reflect.get(proto, 'sendSocketRequest');
  const destroy: (this: RequestQueuePrototype) => void = Reflect.get(proto, 'destroy');
  proto.sendSocketRequest = function (this: RequestQueuePrototype, request: unknown): void {
    send.call(this, request);
    armRequestTimeoutCheck(this);
  };
  // At connect kafkajs clears both timers and arms its interval: now the first request arms it.
  proto.scheduleRequestTimeoutCheck = function (this: RequestQueuePrototype): void {
    this.destroy();
  };
  // kafkajs clears the interval without forgetting it; forgotten, the next request can arm a new one.
  proto.destroy = function (this: RequestQueuePrototype): void {
    destroy.call(this);
    this.requestTimeoutIntervalId = null;
  };
}

export function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
  if (this.throttleCheckTimeoutId) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  let delay: number;
  if (this.pending.length > 0)
    delay = untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS;
  else if (untilUnthrottled > 0) delay = untilUnthrottled;
  else return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
}

/** kafkajs's period of the request-timeout check: its `requestTimeout`, at most 100 ms. */
const REQUEST_TIMEOUT_CHECK_MAX_MS = 100;

/**
 * kafkajs's request-timeout interval, armed while a request is in flight (see 2. above): each tick
 * times out the requests in flight longer than their timeout and destroys the queue of a connection
 * that is gone, as kafkajs's does; a tick that finds nothing in flight stops it.
 */
export function armRequestTimeoutCheck(queue: TimeoutCheckedQueue): void {
  if (!queue.enforceRequestTimeout || queue.inflight.size === 0) return;
  if (queue.requestTimeoutIntervalId) return;
  const interval = setInterval(
    () => {
      queue.inflight.forEach((request) => {
        if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
      });
      if (!queue.isConnected()) queue.destroy();
      else if (queue.inflight.size === 0) {
        clearInterval(interval);
        queue.requestTimeoutIntervalId = null;
      }
    },
    Math.min(queue.requestTimeout, REQUEST_TIMEOUT_CHECK_MAX_MS),
  );
  queue.requestTimeoutIntervalId = interval;
}
