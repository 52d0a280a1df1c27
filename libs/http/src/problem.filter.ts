import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { ApiError, type ErrorBody } from './api-error';

interface Problem {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

/** Fastify's own request errors by code, for any that reach the filter as they were thrown. */
const FASTIFY_ERRORS: Record<string, Problem> = {
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
 * Every error leaves as `{code, message, errors?}`. Bad input is a 4xx with a stable code; only a
 * bug is a 500 (`internal`), and it is logged with its stack, never shown to the caller.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.map(exception);
    // A deliberate 5xx (ApiError: backend down, overload) is an operating condition, not a bug: no stack.
    if (status >= 500 && exception instanceof ApiError) this.logger.warn(`${body.code}: ${body.message}`);
    else if (status >= 500) this.logger.error(`${body.code}: ${describe(exception)}`);
    void reply.status(status).header('content-type', 'application/json; charset=utf-8');
    // RFC 9110 §15.5.2: a 401 must say which scheme would be accepted.
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="tally"');
    void reply.send(body);
  }

  private map(exception: unknown): { status: number; body: ErrorBody } {
    if (exception instanceof HttpException) {
      const response = exception.getResponse();
      if (typeof response === 'object' && response !== null && 'code' in response) {
        return { status: exception.getStatus(), body: response as ErrorBody };
      }
      return statusOnly(exception.getStatus(), exception.message);
    }
    const fastifyCode = (exception as { code?: unknown } | null)?.code;
    if (typeof fastifyCode === 'string' && fastifyCode in FASTIFY_ERRORS) {
      const { status, code, message } = FASTIFY_ERRORS[fastifyCode];
      return { status, body: { code, message } };
    }
    // The client hung up mid-body: nobody will read this answer, and it is no server fault to log.
    if (fastifyCode === 'ECONNRESET') {
      return { status: 400, body: { code: 'request.aborted', message: 'the client closed the connection' } };
    }
    if (exception instanceof SyntaxError) {
      return { status: 400, body: { code: 'request.malformed_json', message: 'the body is not valid JSON' } };
    }
    // Request errors raised while Fastify reads the request carry their 4xx as `statusCode`.
    const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      return statusOnly(statusCode, (exception as Error).message);
    }
    return { status: 500, body: { code: 'internal', message: 'internal error' } };
  }
}

function statusOnly(status: number, message: string): { status: number; body: ErrorBody } {
  if (status >= 500) return { status, body: { code: 'internal', message: 'internal error' } };
  // A 4xx message from the framework describes the request, not the server: safe to show.
  const code =
    CODE_BY_STATUS[status] ??
    (status === 400 && /JSON/.test(message) ? 'request.malformed_json' : 'request.invalid');
  return { status, body: { code, message } };
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}
