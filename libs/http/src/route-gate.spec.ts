import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accessConfig, BearerTokens } from '@tally/auth';
import { installRouteGate } from './route-gate';

const CALLER = 'caller-token-0000001';
const ADMIN = 'admin-token-00000001';
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe(installRouteGate.name, () => {
  let sut: FastifyInstance;
  let gate: { inflight: () => number };
  let bodiesRead: number;
  let release: () => void;
  let held: Promise<void>;

  beforeEach(async () => {
    sut = Fastify();
    bodiesRead = 0;
    held = new Promise((resolve) => (release = resolve));
    sut.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      bodiesRead += 1;
      done(null, JSON.parse(body as string));
    });
    gate = installRouteGate(sut, {
      tokens: new BearerTokens({ auth: 'bearer', callerTokens: [CALLER], adminToken: ADMIN }),
      maxInflight: 2,
    });
    sut.post('/caller', { config: accessConfig('caller') }, () => ({ ok: true }));
    sut.post('/hold', { config: accessConfig('caller') }, async () => {
      await held;
      return { ok: true };
    });
    sut.get('/admin', { config: accessConfig('admin') }, () => ({ ok: true }));
    sut.get('/public', { config: accessConfig('public') }, () => ({ ok: true }));
    sut.get('/undeclared', () => ({ ok: true }));
    sut.get('/fails', { config: accessConfig('public') }, () => {
      throw Object.assign(new Error('Request body size did not match Content-Length'), {
        code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
        statusCode: 400,
      });
    });
    await sut.ready();
  });
  afterEach(async () => {
    release();
    await sut.close();
  });

  const post = (url: string, headers: Record<string, string> = {}) =>
    sut.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      payload: '{}',
    });

  it('refuses a request without a token from its headers: the body is never read', async () => {
    const res = await post('/caller');

    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'auth.missing' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="tally"');
    expect(bodiesRead).toBe(0);
  });

  it('reads the body of an authenticated request', async () => {
    const res = await post('/caller', bearer(CALLER));

    expect(res.statusCode).toBe(200);
    expect(bodiesRead).toBe(1);
  });

  it.each([
    ['a wrong token on a caller route', 'POST', '/caller', 'not-a-token-000000', 401, 'auth.invalid'],
    ['a caller token on an admin route', 'GET', '/admin', CALLER, 403, 'auth.forbidden'],
    ['no token on a route that declares nothing', 'GET', '/undeclared', null, 401, 'auth.missing'],
  ] as const)('answers %s', async (_name, method, url, token, status, code) => {
    const res = await sut.inject({ method, url, headers: token ? bearer(token) : {} });

    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ code });
  });

  it.each([
    ['the admin token on an admin route', '/admin', ADMIN],
    ['the admin token where a caller token will do', '/undeclared', ADMIN],
    ['nothing on a public route', '/public', null],
  ] as const)('lets through %s', async (_name, url, token) => {
    const res = await sut.inject({ method: 'GET', url, headers: token ? bearer(token) : {} });

    expect(res.statusCode).toBe(200);
  });

  it('sheds above the limit, after authentication, and never a public route', async () => {
    // given both slots held by authenticated requests
    const holding = [post('/hold', bearer(CALLER)), post('/hold', bearer(CALLER))];
    await waitFor(() => gate.inflight() === 2);

    // then a stranger is refused for what it is, not counted; a caller is shed; probes still answer
    const stranger = await post('/caller');
    const caller = await post('/caller', bearer(CALLER));
    const probe = await sut.inject({ method: 'GET', url: '/public' });

    expect(stranger.statusCode).toBe(401);
    expect(caller.statusCode).toBe(503);
    expect(caller.json()).toMatchObject({ code: 'server.overloaded' });
    expect(caller.headers['retry-after']).toBe('1');
    expect(probe.statusCode).toBe(200);

    // and the slots come back when the held requests end
    release();
    await Promise.all(holding);
    await waitFor(() => gate.inflight() === 0);
    expect((await post('/caller', bearer(CALLER))).statusCode).toBe(200);
  });

  it('answers an unknown path 404 without asking for a token or reading the body', async () => {
    const res = await post('/nowhere?token=sk-live-secret');

    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 'route.not_found', message: 'no such route' });
    expect(bodiesRead).toBe(0);
  });

  it('answers a known path with another method 405 and lists the methods it has', async () => {
    const res = await sut.inject({ method: 'DELETE', url: '/admin?x=1' });

    expect(res.statusCode).toBe(405);
    expect(res.json()).toMatchObject({ code: 'route.method_not_allowed' });
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it("maps Fastify's errors by their code, with a fixed message", async () => {
    const res = await sut.inject({ method: 'GET', url: '/fails' });

    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 'request.invalid_content_length',
      message: 'the content-length is not a number, comes twice, or does not match the body',
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
