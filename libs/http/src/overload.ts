import { type FastifyInstance } from 'fastify';

const NEVER_SHED = ['/healthz', '/readyz', '/metrics'];

/**
 * Sheds load when more than `maxInflight` requests are in flight: an overloaded API answers at once
 * with 503 `server.overloaded` (never a quota code, so callers can tell the two apart) instead of
 * queueing until every caller times out. Health and metrics are never shed: a probe must not take
 * an overloaded (but working) instance out of service, and overload is when metrics matter most.
 *
 * A request leaves the count when its response closes — finished or cut off. Fastify's `onResponse`
 * does not run when the client disconnects before the answer, and a count that leaked there would
 * shed every later request forever.
 */
export function installOverloadShedding(fastify: FastifyInstance, maxInflight: number): () => number {
  let inflight = 0;
  fastify.addHook('onRequest', (request, reply, done) => {
    const url = request.url;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (NEVER_SHED.includes(path)) {
      done();
      return;
    }
    if (inflight >= maxInflight) {
      void reply
        .status(503)
        .header('retry-after', '1')
        .send({ code: 'server.overloaded', message: 'too many requests in flight; retry shortly' });
      return;
    }
    inflight += 1;
    reply.raw.once('close', () => {
      inflight -= 1;
    });
    done();
  });
  return () => inflight;
}
