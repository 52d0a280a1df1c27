import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { type ErrorBody } from './api-error';

/** Fastify's own request errors (before a handler runs), mapped to stable codes. */
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
 * Every error leaves as `{code, message, errors?}`. Bad input is a 4xx with a stable code; only a
 * bug is a 500 (`internal`), and it is logged with its stack, never shown to the caller.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.map(exception);
    if (status >= 500) this.logger.error(`${body.code}: ${describe(exception)}`);
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private map(exception: unknown): { status: number; body: ErrorBody } {
    if (exception instanceof HttpException) {
      const response = exception.getResponse();
      if (typeof response === 'object' && response !== null && 'code' in response) {
        return { status: exception.getStatus(), body: response as ErrorBody };
      }
      const status = exception.getStatus();
      // The Fastify adapter reports an unparsable body as a plain 400 before any handler runs.
      const code =
        status === 400 && /JSON/.test(exception.message) ? 'request.malformed_json' : genericCode(status);
      return { status, body: { code, message: exception.message } };
    }
    const fastifyCode = (exception as { code?: unknown } | null)?.code;
    if (typeof fastifyCode === 'string' && fastifyCode in FASTIFY_ERRORS) {
      const { status, code, message } = FASTIFY_ERRORS[fastifyCode];
      return { status, body: { code, message } };
    }
    if (
      exception instanceof SyntaxError ||
      (exception as { statusCode?: number } | null)?.statusCode === 400
    ) {
      return { status: 400, body: { code: 'request.malformed_json', message: 'the body is not valid JSON' } };
    }
    return { status: 500, body: { code: 'internal', message: 'internal error' } };
  }
}

function genericCode(status: number): string {
  if (status === 404) return 'route.not_found';
  if (status === 405) return 'route.method_not_allowed';
  if (status === 401) return 'auth.missing';
  if (status === 403) return 'auth.forbidden';
  if (status === 413) return 'request.too_large';
  if (status >= 500) return 'internal';
  return 'request.invalid';
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}
