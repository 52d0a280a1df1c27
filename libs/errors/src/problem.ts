import { HttpException, type Logger } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { ApiError, type ErrorBody } from './api-error';
import { type ErrorCode } from './error-codes';

/** An error as it leaves an API: the status and the `{code, message, errors?}` body. */
export interface Problem {
  readonly status: number;
  readonly body: ErrorBody;
}

type Body = { readonly code: ErrorCode; readonly message: string };

const TOO_LARGE: Body = { code: 'request.too_large', message: 'the request body is too large' };
const MEDIA_TYPE: Body = { code: 'request.unsupported_media_type', message: 'send application/json' };
const EMPTY_JSON: Body = { code: 'request.malformed_json', message: 'the JSON body is empty' };
const NOT_JSON: Body = { code: 'request.malformed_json', message: 'the body is not valid JSON' };
const BAD_LENGTH: Body = {
  code: 'request.invalid_content_length',
  message: 'the content-length is not a number, comes twice, or does not match the body',
};
const MALFORMED_HTTP: Body = { code: 'request.malformed_http', message: 'the request is not valid HTTP/1.1' };
const TIMEOUT: Body = {
  code: 'request.timeout',
  message: 'the request did not arrive within its deadline; the connection is closed',
};
const URI_TOO_LONG: Body = {
  code: 'request.uri_too_long',
  message: 'a path segment is longer than 100 characters',
};
const HEADER_TOO_LARGE: Body = {
  code: 'request.header_too_large',
  message: 'the request line and headers are too large',
};

/**
 * Errors of Fastify and of Node's HTTP parser a client can cause, by their `code`, each with a fixed
 * message: the framework's own messages repeat the URL or header they choke on, and a caller may
 * have put a secret there (a token in a query string). Codes from fastify/lib/errors.js that only a
 * server bug or a boot mistake can raise are absent on purpose: they stay 500 `internal`.
 */
const BY_CODE: Readonly<Record<string, Problem>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, body: TOO_LARGE },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, body: MEDIA_TYPE },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { status: 415, body: MEDIA_TYPE },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, body: EMPTY_JSON },
  FST_ERR_ROUTE_MISSING_CONTENT: { status: 400, body: EMPTY_JSON },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, body: NOT_JSON },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, body: BAD_LENGTH },
  FST_ERR_VALIDATION: { status: 400, body: { code: 'request.invalid', message: 'the request is invalid' } },
  FST_ERR_BAD_URL: {
    status: 400,
    body: { code: 'request.invalid_url', message: 'the path has a malformed percent-escape' },
  },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, body: URI_TOO_LONG },
  FST_ERR_NOT_FOUND: { status: 404, body: { code: 'route.not_found', message: 'no such route' } },
  // The client hung up mid-body: nobody will read this answer, and it is no server fault to log.
  ECONNRESET: { status: 400, body: { code: 'request.aborted', message: 'the client closed the connection' } },
  // Node's HTTP parser and its deadlines (server `clientError`); every other HPE_* is MALFORMED_HTTP.
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, body: TIMEOUT },
  HPE_HEADER_OVERFLOW: { status: 431, body: HEADER_TOO_LARGE },
  HPE_INVALID_CONTENT_LENGTH: { status: 400, body: BAD_LENGTH },
  // Two content-lengths that differ: the framing of request smuggling.
  HPE_UNEXPECTED_CONTENT_LENGTH: { status: 400, body: BAD_LENGTH },
};

/**
 * Errors that carry only a status: Nest re-throws Fastify's errors as `HttpException(message, status)`
 * (dropping their `FST_ERR_*` code) and its router throws bare 404s. The status then decides the code,
 * and the message is fixed for the same reason as above (Nest's 404 says `Cannot GET <url>`).
 */
const BY_STATUS: Readonly<Record<number, Body>> = {
  400: { code: 'request.invalid', message: 'the request is invalid' },
  401: { code: 'auth.missing', message: 'an Authorization: Bearer <token> header is required' },
  403: { code: 'auth.forbidden', message: 'this token may not call this endpoint' },
  404: { code: 'route.not_found', message: 'no such route' },
  405: { code: 'route.method_not_allowed', message: 'this route does not take this method' },
  408: TIMEOUT,
  413: TOO_LARGE,
  414: URI_TOO_LONG,
  415: MEDIA_TYPE,
  417: { code: 'request.expectation_failed', message: 'only Expect: 100-continue is supported' },
  431: HEADER_TOO_LARGE,
};

/**
 * Every error as the API answers it. Bad input is a 4xx with a stable code; only a bug is a 500
 * (`internal`), never with its message. A framework error is recognised by its code first (the same
 * answer on Nest routes and on routes registered on Fastify directly, see `routeErrorHandler`), then
 * by its status.
 */
export function problemOf(exception: unknown): Problem {
  if (exception instanceof HttpException) {
    const response = exception.getResponse();
    if (typeof response === 'object' && response !== null && 'code' in response) {
      return { status: exception.getStatus(), body: response as ErrorBody };
    }
    return statusOnly(exception.getStatus(), exception.message);
  }
  const code = (exception as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (Object.prototype.hasOwnProperty.call(BY_CODE, code)) return BY_CODE[code];
    if (code.startsWith('HPE_')) return { status: 400, body: MALFORMED_HTTP };
  }
  if (exception instanceof SyntaxError) return { status: 400, body: NOT_JSON };
  // Request errors raised while Fastify reads the request carry their 4xx as `statusCode`.
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return statusOnly(statusCode, (exception as Error).message);
  }
  return { status: 500, body: { code: 'internal', message: 'internal error' } };
}

/** Writes a problem: JSON content type, and the auth scheme on a 401 (RFC 9110 §15.5.2). */
export function sendProblem(reply: FastifyReply, problem: Problem): void {
  void reply.status(problem.status).header('content-type', 'application/json; charset=utf-8');
  if (problem.status === 401) void reply.header('www-authenticate', 'Bearer realm="tally"');
  void reply.send(problem.body);
}

/** A deliberate 5xx (ApiError: backend down, overload) is an operating condition, not a bug: no stack. */
/** `requestId`: the request's id (`x-request-id`), so a log line can be matched with its answer. */
export function logProblem(logger: Logger, exception: unknown, problem: Problem, requestId?: string): void {
  if (problem.status < 500) return;
  const of = requestId === undefined ? '' : ` (request ${requestId})`;
  if (exception instanceof ApiError) logger.warn(`${problem.body.code}: ${problem.body.message}${of}`);
  else logger.error(`${problem.body.code}${of}: ${describe(exception)}`);
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}

function statusOnly(status: number, message: string): Problem {
  // A deliberate 5xx is an ApiError with its own code; any other is a bug, answered as one.
  if (status >= 500) return { status: 500, body: { code: 'internal', message: 'internal error' } };
  if (status === 400 && /JSON/.test(message)) return { status, body: NOT_JSON };
  const body = BY_STATUS[status] as Body | undefined;
  // A 4xx outside the vocabulary's statuses is answered as the generic invalid request it is.
  return body ? { status, body } : { status: 400, body: BY_STATUS[400] };
}
