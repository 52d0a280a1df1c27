import { Logger } from '@nestjs/common';
import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type onRequestHookHandler,
} from 'fastify';
import {
  accessOf,
  type BearerTokens,
  ForbiddenError,
  GRANT_KEY,
  type RouteAccess,
  type TokenGrant,
} from '@tally/auth';
import { ApiError, logProblem, type Problem, problemOf, sendProblem } from '@tally/errors';
import { inflightLimiter } from './overload';
import { refuse } from './refuse';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
const logger = new Logger('http');

const NOT_FOUND: Problem = { status: 404, body: { code: 'route.not_found', message: 'no such route' } };
const NOT_ALLOWED: Problem = {
  status: 405,
  body: { code: 'route.method_not_allowed', message: 'this route does not take this method' },
};
const NO_HOST: Problem = {
  status: 400,
  body: { code: 'request.malformed_http', message: 'an HTTP/1.1 request needs a Host header' },
};
const CLOSING: Problem = {
  status: 503,
  body: { code: 'server.shutting_down', message: 'this instance is closing; retry' },
};

/**
 * Everything decided from the request line and headers alone, before a body is read or an in-flight
 * slot is taken — in this order, so that nothing a stranger sends costs more than its headers:
 * 1. no route (404, or 405 with `Allow` when the path exists with other methods), no `Host` on an
 *    HTTP/1.1 request, or the instance closing: answered at once, for every request;
 * 2. the route's access (`RequireAccess`, or `accessConfig` on a Fastify route) against the
 *    `Authorization` header: 401/403 at once; a tenant-scoped token is refused (403) on a route that
 *    does not judge the tenant itself (`perTenant`). The grant is left on the request (`GRANT_KEY`)
 *    for the handler's tenant stage (`@Granted()`, the hot routes);
 * 3. overload shedding (not on public routes), see `inflightLimiter`.
 * Steps 2 and 3 are hooks of each route, fixed when it is registered: the hot path pays for no
 * lookup. Every route also gets the error handler that maps Fastify's errors into the contract.
 */
export function installRouteGate(
  fastify: FastifyInstance,
  options: { readonly tokens: BearerTokens; readonly maxInflight: number },
): { readonly inflight: () => number } {
  const limiter = inflightLimiter(options.maxInflight);
  // Declared on the request's prototype: a grant set on each request then fills an existing slot
  // instead of giving every request object a new shape.
  fastify.decorateRequest(GRANT_KEY, undefined);
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.is404) return refuse(request, reply, unmatched(fastify, request, reply));
    if (request.raw.httpVersionMinor === 1 && request.headers.host === undefined) {
      return refuse(request, reply, NO_HOST);
    }
    if (closing) return refuse(request, reply, CLOSING);
    done();
  });
  fastify.addHook('onRoute', (route) => {
    const access = accessOf(route.config);
    const gate: onRequestHookHandler[] = [];
    // One hook: authentication, then the limiter called directly (a hook fewer on every request).
    if (access.access !== 'public') gate.push(authenticate(fastify, options.tokens, access, limiter.hook));
    route.onRequest = [...gate, ...asArray(route.onRequest)];
    route.errorHandler ??= routeErrorHandler;
  });
  return { inflight: limiter.inflight };
}

/**
 * Errors Fastify raises around a handler (body too large, bad JSON, a hook that throws) go through
 * `problemOf` with their `FST_ERR_*` code, on Nest routes too: Nest's own handler for them keeps only
 * their status.
 */
export function routeErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const problem = problemOf(error);
  logProblem(logger, error, problem, request.id);
  sendProblem(reply, problem);
}

const NAMES_NO_TENANT = 'this call is not about one tenant: it needs a token without a tenant list';

function authenticate(
  fastify: FastifyInstance,
  tokens: BearerTokens,
  route: RouteAccess,
  next: onRequestHookHandler,
): onRequestHookHandler {
  return (request, reply, done) => {
    let grant = tokens.authorize(request.headers.authorization, route.access, request.raw.socket);
    if (!(grant instanceof ApiError) && !route.perTenant && grant.tenants !== undefined)
      grant = new ForbiddenError(NAMES_NO_TENANT, grant.name);
    if (grant instanceof ApiError) {
      if (grant instanceof ForbiddenError) logForbidden(grant, request.url, request.id);
      return refuse(request, reply, problemOf(grant));
    }
    (request as FastifyRequest & { [GRANT_KEY]?: TokenGrant })[GRANT_KEY] = grant;
    void next.call(fastify, request, reply, done);
  };
}

/**
 * A known token refused is a misconfiguration worth an operator's eye, and its owner is known (by
 * name). Unknown tokens (401) are not logged: anyone can send those, as fast as they like. The path
 * only: a query string may hold anything a caller typed.
 */
function logForbidden(error: ForbiddenError, url: string, requestId: string): void {
  logger.warn(
    `auth.forbidden: token ${error.tokenName} on ${url.split('?')[0]}: ${error.message} (request ${requestId})`,
  );
}

/** 405 when another method has this path (RFC 9110 §15.5.6), else 404. Never on the hot path. */
function unmatched(fastify: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Problem {
  const url = request.url;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const allowed = METHODS.filter((method) => exists(fastify, method, path));
  if (allowed.length === 0) return NOT_FOUND;
  void reply.header('allow', allowed.join(', '));
  return NOT_ALLOWED;
}

function exists(fastify: FastifyInstance, method: string, path: string): boolean {
  try {
    return fastify.findRoute({ method, url: path }) !== null;
  } catch {
    return false;
  }
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
