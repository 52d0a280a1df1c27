import { REQUEST_ID_HEADER, requestIdOf } from '@tally/observability';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

/**
 * Every request's id (`request.id`): the caller's `x-request-id` when it is a safe token (1..128
 * characters of `[A-Za-z0-9._:+/=@-]`), else one made here. Fastify computes `request.id` for every
 * request anyway; this only decides how, so it costs a header read and no extra hook.
 */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  requestIdHeader: false,
  genReqId: (raw) => requestIdOf(raw.headers[REQUEST_ID_HEADER]),
};

/** Echoes the id in every answer's `x-request-id`, errors and refusals by the route gate included. */
export function installRequestIdEcho(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
