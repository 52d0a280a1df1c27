/**
 * kafkajs 2.2.4 (its last release) re-arms a timer on every connection for as long as the process
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
 */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's own interval between checks while requests wait for an in-flight slot. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;
const PATCHED = Symbol.for('tally.kafkajs.idleTimerFix');

/** Applied once per process, before any kafkajs client is used (see createKafka). */
export function fixKafkajsIdleTimer(): void {
  // A deep import of a pinned, unmaintained package: its internals will not move under us.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RequestQueue = require('kafkajs/src/network/requestQueue') as {
    prototype: RequestQueueInternals & { [PATCHED]?: true };
  };
  const proto = RequestQueue.prototype;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  proto.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
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
