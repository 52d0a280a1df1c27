import { HttpException, type Logger } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { ApiError, type ErrorBody } from './api-error';

/** An error as it leaves an API: the status and the `{code, message, errors?}` body. */
export interface Problem {
  readonly status: number;
  readonly body: ErrorBody;
}

/** Fastify's own request errors by code, for any that reach the mapping as they were thrown. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'request.too_large',
    message: 'the request body is too large',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'request.unsupported_media_type',
    message: 'send application/json',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'request.malformed_json',
    message: 'the JSON body is empty',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'request.invalid_content_length',
    message: 'the content-length does not match the body',
  },
};

/**
 * Errors that carry only a status: Nest re-throws Fastify's errors as `HttpException(message, status)`
 * (dropping their `FST_ERR_*` code) and its router throws bare 404s. The status then decides the code.
 */
const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  401: 'auth.missing',
  403: 'auth.forbidden',
  404: 'route.not_found',
  405: 'route.method_not_allowed',
  413: 'request.too_large',
  415: 'request.unsupported_media_type',
};

/**
 * Every error as the API answers it. Bad input is a 4xx with a stable code; only a bug is a 500
 * (`internal`), never with its message. A FastifyError is first turned into the
 * `HttpException(message, status)` Nest's router makes of it, so routes registered on Fastify
 * directly answer exactly what Nest-routed ones answer.
 */
export function problemOf(exception: unknown): Problem {
  const error = isFastifyHttpError(exception)
    ? new HttpException(exception.message, exception.statusCode)
    : exception;
  if (error instanceof HttpException) {
    const response = error.getResponse();
    if (typeof response === 'object' && response !== null && 'code' in response) {
      return { status: error.getStatus(), body: response as ErrorBody };
    }
    return statusOnly(error.getStatus(), error.message);
  }
  const fastifyCode = (error as { code?: unknown } | null)?.code;
  if (typeof fastifyCode === 'string' && fastifyCode in FASTIFY_ERRORS) {
    const { status, code, message } = FASTIFY_ERRORS[fastifyCode];
    return { status, body: { code, message } };
  }
  // The client hung up mid-body: nobody will read this answer, and it is no server fault to log.
  if (fastifyCode === 'ECONNRESET') {
    return { status: 400, body: { code: 'request.aborted', message: 'the client closed the connection' } };
  }
  if (error instanceof SyntaxError) {
    return { status: 400, body: { code: 'request.malformed_json', message: 'the body is not valid JSON' } };
  }
  // Request errors raised while Fastify reads the request carry their 4xx as `statusCode`.
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return statusOnly(statusCode, (error as Error).message);
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
export function logProblem(logger: Logger, exception: unknown, problem: Problem): void {
  if (problem.status < 500) return;
  if (exception instanceof ApiError) logger.warn(`${problem.body.code}: ${problem.body.message}`);
  else logger.error(`${problem.body.code}: ${describe(exception)}`);
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}

/** Nest's router test for "an HTTP error raised by Fastify" (RoutesResolver.isHttpFastifyError). */
function isFastifyHttpError(error: unknown): error is Error & { statusCode: number } {
  return (
    error instanceof Error &&
    error.name === 'FastifyError' &&
    typeof (error as { statusCode?: unknown }).statusCode === 'number'
  );
}

function statusOnly(status: number, message: string): Problem {
  if (status >= 500) return { status, body: { code: 'internal', message: 'internal error' } };
  // A 4xx message from the framework describes the request, not the server: safe to show.
  const code =
    CODE_BY_STATUS[status] ??
    (status === 400 && /JSON/.test(message) ? 'request.malformed_json' : 'request.invalid');
  return { status, body: { code, message } };
}
