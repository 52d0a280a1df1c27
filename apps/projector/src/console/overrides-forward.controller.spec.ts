import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from '@tally/errors';
import type { FastifyReply } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleOptions } from './console.constants';
import { OverridesForwardController } from './overrides-forward.controller';

/** A stand-in decision API over real HTTP: answers what the test queues, records what it was sent. */
let server: Server;
let base: string;
let next: { status: number; body: string } = { status: 200, body: '{}' };
const received: { method?: string; url?: string; authorization?: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
      res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The one thing the controller does with the reply: set its status. */
function replyStub(): { reply: FastifyReply; status: () => number | undefined } {
  let code: number | undefined;
  const reply = {
    status(c: number) {
      code = c;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, status: () => code };
}

const options = (decisionApiUrl?: string): ConsoleOptions => ({
  ...(decisionApiUrl === undefined ? {} : { decisionApiUrl }),
  sampleMs: 10_000,
  assetsDir: '.',
  redis: { url: 'redis://127.0.0.1:1' } as ConsoleOptions['redis'],
});

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return { status: (error as ApiError).getStatus(), body: (error as ApiError).getResponse() };
}

describe(OverridesForwardController.name, () => {
  it('forwards a change with the caller token, the encoded address and the body; keeps its status', async () => {
    const sut = new OverridesForwardController(options(base));
    next = { status: 201, body: '{"policy":"p","key":"a:b"}' };
    const reply = replyStub();

    const answer = await sut.put(
      'p',
      'a:b',
      { tenant: 'acme' },
      { limits: { minute: 0 }, reason: 'r' },
      reply.reply,
      'Bearer t',
    );

    expect(answer).toEqual({ policy: 'p', key: 'a:b' });
    expect(reply.status()).toBe(201);
    expect(received.at(-1)).toEqual({
      method: 'PUT',
      url: '/v1/overrides/p/a%3Ab?tenant=acme',
      authorization: 'Bearer t',
      body: '{"limits":{"minute":0},"reason":"r"}',
    });
  });

  it('lists with only the parameters given, and answers a removal with 204 and no body', async () => {
    const sut = new OverridesForwardController(options(base));
    next = { status: 200, body: '{"items":[],"next_cursor":null}' };
    expect(await sut.list({ policy: 'p', limit: '2' }, 'Bearer t')).toEqual({ items: [], next_cursor: null });
    expect(received.at(-1)?.url).toBe('/v1/overrides?policy=p&limit=2');

    next = { status: 204, body: '' };
    const reply = replyStub();
    expect(await sut.remove('p', '-', {}, reply.reply, 'Bearer t')).toBeUndefined();
    expect(reply.status()).toBe(204);
    expect(received.at(-1)).toMatchObject({ method: 'DELETE', url: '/v1/overrides/p/-' });
  });

  it("passes on the decision API's refusals of the request with their code and fields", async () => {
    const sut = new OverridesForwardController(options(base));
    const errors = [{ path: 'limits.fortnight', message: 'not a window of policy p' }];
    next = {
      status: 400,
      body: JSON.stringify({ code: 'request.invalid', message: 'the request is invalid', errors }),
    };
    expect(await refusal(sut.list({}, 'Bearer t'))).toEqual({
      status: 400,
      body: { code: 'request.invalid', message: 'the request is invalid', errors },
    });
    next = { status: 404, body: '{"code":"override.not_found","message":"none"}' };
    expect(await refusal(sut.remove('p', 'k', {}, replyStub().reply, 'Bearer t'))).toEqual({
      status: 404,
      body: { code: 'override.not_found', message: 'none' },
    });
  });

  it('answers its own codes when the decision API fails, is down or is not configured', async () => {
    next = { status: 500, body: '{"code":"internal","message":"boom"}' };
    expect(await refusal(new OverridesForwardController(options(base)).list({}, 'Bearer t'))).toMatchObject({
      status: 502,
      body: { code: 'upstream.unreachable' },
    });
    next = { status: 400, body: 'not json' };
    expect(await refusal(new OverridesForwardController(options(base)).list({}, 'Bearer t'))).toMatchObject({
      status: 502,
      body: { code: 'upstream.unreachable' },
    });
    expect(
      await refusal(new OverridesForwardController(options('http://127.0.0.1:1')).list({}, 'Bearer t')),
    ).toMatchObject({ status: 502, body: { code: 'upstream.unreachable' } });
    expect(await refusal(new OverridesForwardController(options()).list({}, 'Bearer t'))).toMatchObject({
      status: 503,
      body: { code: 'upstream.not_configured' },
    });
  });
});
