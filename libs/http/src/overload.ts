import { type FastifyInstance } from 'fastify';

/**
 * Sheds load when more than `maxInflight` requests are in flight: an overloaded API answers at once
 * with 503 `server.overloaded` (never a quota code, so callers can tell the two apart) instead of
 * queueing until every caller times out. Health and metrics are never shed.
 */
export function installOverloadShedding(fastify: FastifyInstance, maxInflight: number): () => number {
  let inflight = 0;
  fastify.addHook('onRequest', (request, reply, done) => {
    if (
      request.url.startsWith('/healthz') ||
      request.url.startsWith('/readyz') ||
      request.url.startsWith('/metrics')
    ) {
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
    (request as { tallyCounted?: boolean }).tallyCounted = true;
    done();
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    if ((request as { tallyCounted?: boolean }).tallyCounted) inflight -= 1;
    done();
  });
  return () => inflight;
}
