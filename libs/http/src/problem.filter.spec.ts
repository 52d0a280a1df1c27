import { type ArgumentsHost, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ERROR_CODES, type ErrorCode } from '@tally/errors';
import { ProblemFilter } from './problem.filter';

interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
}

function replyHost(): { host: ArgumentsHost; sent: Sent } {
  const sent: Sent = { headers: {} };
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header(name: string, value: string) {
      sent.headers[name] = value;
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ id: 'req-7' }) }),
  } as unknown as ArgumentsHost;
  return { host, sent };
}

function fastifyStyle(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe(ProblemFilter.name, () => {
  let sut: ProblemFilter;
  beforeEach(() => {
    sut = new ProblemFilter();
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    [
      'an ApiError',
      new ApiError(409, 'idempotency.conflict', 'msg', [{ path: 'a', message: 'b' }]),
      409,
      'idempotency.conflict',
    ],
    // Nest re-throws Fastify's request errors as bare HttpExceptions: the status decides.
    [
      'a wrapped body-too-large',
      new HttpException('Request body is too large', 413),
      413,
      'request.too_large',
    ],
    [
      'a wrapped unsupported media type',
      new HttpException('Unsupported Media Type', 415),
      415,
      'request.unsupported_media_type',
    ],
    [
      'a wrapped JSON error',
      new HttpException("Body is not valid JSON but content-type is set to 'application/json'", 400),
      400,
      'request.malformed_json',
    ],
    ['another bare 400', new HttpException('bad', 400), 400, 'request.invalid'],
    ['an unknown route', new NotFoundException('Cannot GET /x'), 404, 'route.not_found'],
    [
      'a raw Fastify error',
      fastifyStyle('too large', { code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
      413,
      'request.too_large',
    ],
    [
      'a client that hung up',
      fastifyStyle('aborted', { code: 'ECONNRESET', statusCode: 400 }),
      400,
      'request.aborted',
    ],
    [
      'a request error with a 4xx statusCode',
      fastifyStyle('bad header', { statusCode: 431 }),
      431,
      'request.header_too_large',
    ],
    ['a 4xx outside the vocabulary', fastifyStyle('teapot', { statusCode: 418 }), 400, 'request.invalid'],
    [
      'a malformed percent-escape',
      fastifyStyle("'/v1/x/%E0%A4%A' is not a valid url component", {
        code: 'FST_ERR_BAD_URL',
        statusCode: 400,
      }),
      400,
      'request.invalid_url',
    ],
    [
      'an overlong path parameter',
      fastifyStyle("'/v1/aaaa' is exceeding the max param length", {
        code: 'FST_ERR_MAX_PARAM_LENGTH',
        statusCode: 414,
      }),
      414,
      'request.uri_too_long',
    ],
    [
      'a content-length that lies',
      fastifyStyle('Request body size did not match Content-Length', {
        code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
        statusCode: 400,
      }),
      400,
      'request.invalid_content_length',
    ],
    [
      'a request past its deadline',
      fastifyStyle('timeout', { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
      408,
      'request.timeout',
    ],
    [
      'headers over the limit',
      fastifyStyle('overflow', { code: 'HPE_HEADER_OVERFLOW' }),
      431,
      'request.header_too_large',
    ],
    [
      'a bad method token',
      fastifyStyle('Invalid method', { code: 'HPE_INVALID_METHOD' }),
      400,
      'request.malformed_http',
    ],
    [
      'a non-numeric content-length',
      fastifyStyle('Invalid', { code: 'HPE_INVALID_CONTENT_LENGTH' }),
      400,
      'request.invalid_content_length',
    ],
    ['a bare 405', new HttpException('Method Not Allowed', 405), 405, 'route.method_not_allowed'],
    ['a bare 408', new HttpException('Request Timeout', 408), 408, 'request.timeout'],
    ['a bug', new TypeError('x is undefined'), 500, 'internal'],
    ['a 5xx HttpException', new HttpException('db password is hunter2', 502), 500, 'internal'],
  ])('maps %s to %i %s', (_name, exception, status, code) => {
    const { host, sent } = replyHost();

    sut.catch(exception, host);

    expect(sent.status).toBe(status);
    expect(sent.body).toMatchObject({ code, message: expect.any(String) });
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    // and the answer is one the vocabulary documents, status included
    expect(ERROR_CODES[code as ErrorCode].statuses).toContain(status);
  });

  it.each([
    ["Nest's 404", new NotFoundException('Cannot GET /nope?token=sk-live-secret')],
    [
      "Fastify's bad URL",
      fastifyStyle("'/x?token=sk-live-secret%E0' is not a valid url component", {
        code: 'FST_ERR_BAD_URL',
        statusCode: 400,
      }),
    ],
    ['a bare 400', new HttpException('header x-key: sk-live-secret is invalid', 400)],
    ['an unknown 4xx', fastifyStyle('x-key: sk-live-secret', { statusCode: 422 })],
  ])('never echoes what the framework says about the request: %s', (_name, exception) => {
    const { host, sent } = replyHost();

    sut.catch(exception, host);

    expect(JSON.stringify(sent.body)).not.toContain('sk-live-secret');
  });

  it('never shows the message of a server error', () => {
    const { host, sent } = replyHost();

    sut.catch(new Error('connect ECONNREFUSED 10.0.0.7:6379'), host);

    expect(sent.body).toEqual({ code: 'internal', message: 'internal error' });
  });

  it("logs a server error with the request's id, so the line matches the answer's x-request-id", () => {
    const { host } = replyHost();
    const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

    sut.catch(new Error('boom'), host);

    expect(logged).toHaveBeenCalledWith(expect.stringMatching(/^internal \(request req-7\): Error: boom/));
  });

  it('names the Bearer scheme on a 401', () => {
    const { host, sent } = replyHost();

    sut.catch(new ApiError(401, 'auth.missing', 'token please'), host);

    expect(sent.headers['www-authenticate']).toBe('Bearer realm="tally"');
  });
});
