import { randomBytes } from 'node:crypto';

/**
 * Request ids: a caller's `x-request-id` when it is a safe token, else one made here. A caller's
 * value is echoed in a response header and written into log lines, so anything that could split a
 * header or a log line, or bloat either, is replaced rather than trusted.
 */
export const REQUEST_ID_HEADER = 'x-request-id';
/** Printable, no spaces or quotes: what UUIDs, ULIDs, Envoy's and most proxies' ids are made of. */
const SAFE = /^[A-Za-z0-9._:+/=@-]{1,128}$/;

/** This process's prefix: ids stay unique across workers and restarts without a random draw each. */
const PREFIX = `${randomBytes(6).toString('hex')}-`;
let counter = 0;

/** The caller's id when it is 1..128 safe characters, else a new one. */
export function requestIdOf(given: unknown): string {
  if (typeof given === 'string' && SAFE.test(given)) return given;
  return newRequestId();
}

/** A new id: this process's random prefix and a counter (base 36). */
export function newRequestId(): string {
  counter = counter === Number.MAX_SAFE_INTEGER ? 1 : counter + 1;
  return PREFIX + counter.toString(36);
}
