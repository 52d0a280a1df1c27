import { type onRequestHookHandler } from 'fastify';
import { refuse } from './refuse';

/** Counts requests in flight and sheds those above the limit; one per app, shared by its routes. */
export interface InflightLimiter {
  /** The `onRequest` hook of a route that may be shed. */
  readonly hook: onRequestHookHandler;
  readonly inflight: () => number;
}

/**
 * Sheds load when more than `maxInflight` requests are in flight: an overloaded API answers at once
 * with 503 `server.overloaded` (never a quota code, so callers can tell the two apart) instead of
 * queueing until every caller times out. The route gate puts this hook on every route but the public
 * ones (health and metrics): a probe must not take an overloaded (but working) instance out of
 * service, and overload is when metrics matter most. It runs after authentication, so a stranger
 * without a token never holds a slot, and before the body is read, so a slow body holds one at most
 * until `TALLY_REQUEST_TIMEOUT_MS`.
 *
 * A request leaves the count when its response closes — finished or cut off. Fastify's `onResponse`
 * does not run when the client disconnects before the answer, and a count that leaked there would
 * shed every later request forever.
 */
export function inflightLimiter(maxInflight: number): InflightLimiter {
  let inflight = 0;
  const leave = (): void => {
    inflight -= 1;
  };
  const hook: onRequestHookHandler = (request, reply, done) => {
    if (inflight >= maxInflight) {
      void reply.header('retry-after', '1');
      refuse(request, reply, {
        status: 503,
        body: { code: 'server.overloaded', message: 'too many requests in flight; retry shortly' },
      });
      return;
    }
    inflight += 1;
    // `on`, not `once`: a response closes once, and `once` would wrap `leave` anew for every request.
    reply.raw.on('close', leave);
    done();
  };
  return { hook, inflight: () => inflight };
}
