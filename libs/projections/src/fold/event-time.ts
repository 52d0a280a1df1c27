const CANONICAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z$/;

/**
 * Event times passed validation as RFC 3339. The relay writes `toISOString()` (`…T09:41:27.500Z`),
 * and the events of a batch share a few minutes: the minute prefix is parsed once and remembered,
 * seconds and milliseconds are added from the digits. Any other spelling goes through `Date.parse`,
 * which wants the upper-case `T`/`Z` form.
 */
export function eventTimeMs(time: string): number {
  if (
    time.length === 24 &&
    time.charCodeAt(16) === COLON &&
    time.charCodeAt(19) === DOT &&
    time.endsWith('Z')
  ) {
    const minute = time.slice(0, 16);
    let minuteMs = recentMinutes.get(minute);
    if (minuteMs === undefined) {
      minuteMs = Date.parse(`${minute}:00Z`);
      if (recentMinutes.size >= RECENT_MINUTES) recentMinutes.clear();
      recentMinutes.set(minute, minuteMs);
    }
    const seconds = digits(time, 17, 19);
    const millis = digits(time, 20, 23);
    if (!Number.isNaN(minuteMs) && seconds < 60 && millis >= 0 && seconds >= 0) {
      return minuteMs + seconds * 1000 + millis;
    }
  }
  const ms = Date.parse(CANONICAL_TIME.test(time) ? time : time.toUpperCase().replace(' ', 'T'));
  if (Number.isNaN(ms)) throw new RangeError(`event time is not RFC 3339: ${time}`);
  return ms;
}

const COLON = 0x3a;
const DOT = 0x2e;
/** Bounded: a replay over months meets every minute once. */
const RECENT_MINUTES = 1024;
const recentMinutes = new Map<string, number>();

/** The decimal number in `text[from, to)`, or -1 when a character there is not a digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
