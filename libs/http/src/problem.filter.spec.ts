import { type ArgumentsHost, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api-error';
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
  const host = { switchToHttp: () => ({ getResponse: () => reply }) } as unknown as ArgumentsHost;
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
    ['an ApiError', new ApiError(409, 'x.y', 'msg', [{ path: 'a', message: 'b' }]), 409, 'x.y'],
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
      'request.invalid',
    ],
    ['a bug', new TypeError('x is undefined'), 500, 'internal'],
    ['a 5xx HttpException', new HttpException('db password is hunter2', 502), 502, 'internal'],
  ])('maps %s to %i %s', (_name, exception, status, code) => {
    const { host, sent } = replyHost();

    sut.catch(exception, host);

    expect(sent.status).toBe(status);
    expect(sent.body).toMatchObject({ code, message: expect.any(String) });
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('never shows the message of a server error', () => {
    const { host, sent } = replyHost();

    sut.catch(new Error('connect ECONNREFUSED 10.0.0.7:6379'), host);

    expect(sent.body).toEqual({ code: 'internal', message: 'internal error' });
  });

  it('names the Bearer scheme on a 401', () => {
    const { host, sent } = replyHost();

    sut.catch(new ApiError(401, 'auth.missing', 'token please'), host);

    expect(sent.headers['www-authenticate']).toBe('Bearer realm="tally"');
  });
});
