import { type ServerOptions as HttpServerOptions } from 'node:http';
import { type ServerOptions as HttpsServerOptions } from 'node:https';
import { type FastifyServerOptions } from 'fastify';
import { answerClientError } from './connection-errors';
import { problemOf } from '@tally/errors';
import { refuse } from './refuse';

/** The deadlines of an HTTP listener and its optional TLS identity (from `TALLY_*`, see TallyConfig). */
export interface TransportOptions {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
}

/**
 * How often Node looks for requests past their headers or request deadline: it does not time each
 * request, it scans its open connections on an interval (30 s by default, which would let a request
 * live up to twice its deadline). A tenth of the shorter deadline, between 100 ms and 1 s: at the
 * defaults a request is cut at most 1 s after its deadline, for one cheap scan a second.
 */
export function checkingIntervalMs(
  options: Pick<TransportOptions, 'headersTimeoutMs' | 'requestTimeoutMs'>,
): number {
  return Math.min(
    1_000,
    Math.max(100, Math.floor(Math.min(options.headersTimeoutMs, options.requestTimeoutMs) / 10)),
  );
}

/**
 * The Fastify options of every Tally HTTP listener: read deadlines for headers and bodies (Fastify
 * turns Node's request deadline off by default), idle connections closed, TLS when configured, and
 * every error raised outside a route — parser errors, malformed URLs, overlong path parameters,
 * requests arriving while closing — answered in the error contract.
 */
export function serverOptions(
  options: TransportOptions,
): FastifyServerOptions & { http?: HttpServerOptions; https?: HttpsServerOptions } {
  const node = {
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(options),
    // Answered by the route gate in the error contract rather than by Node with an empty 400.
    requireHostHeader: false,
  };
  return {
    // Fastify sets these on the server after creating it (its requestTimeout default, 0, is "never").
    requestTimeout: options.requestTimeoutMs,
    keepAliveTimeout: options.idleTimeoutMs,
    // Socket inactivity. Node's deadlines stop once a request has fully arrived (a new connection
    // is on the headers clock from its first moment); this closes one on which nothing moves at all.
    connectionTimeout: options.idleTimeoutMs,
    // The route gate answers requests that arrive while closing (Fastify's own 503 has its own body).
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // Malformed percent-escapes and overlong path parameters, found while routing (no hook has run).
    frameworkErrors: (error, request, reply) => refuse(request, reply, problemOf(error)),
    ...(options.tls
      ? {
          https: {
            ...node,
            cert: options.tls.cert,
            key: options.tls.key,
            // A client that connects and never finishes its handshake is as slow as one whose
            // headers never come.
            handshakeTimeout: options.headersTimeoutMs,
          },
        }
      : { http: node }),
  };
}
