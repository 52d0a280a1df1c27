/**
 * The SDK when Tally does not answer: a closed port, a server that hangs, 5xx that are not decisions,
 * a connection that breaks. Real sockets on loopback (stand-in servers where the real API cannot be
 * made to misbehave on cue); the fail mode decides, and only idempotent requests are retried.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TallyClient } from '@tally/client';
import { freePort } from '@tally/testing';

const DECISION = {
  allowed: true,
  decision_id: '01JD0000000000000000000000',
  reason: null,
  code: null,
  retry_after_ms: 0,
  degraded: false,
  replayed: false,
  policies: [],
};
const request = { selectors: { tenant: 'acme', route: 'evaluate' } };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function client(
  baseUrl: string,
  options: Partial<ConstructorParameters<typeof TallyClient>[0]> = {},
): TallyClient {
  const c = new TallyClient({ baseUrl, token: 'caller-token', timeoutMs: 2000, ...options });
  cleanups.push(() => c.close());
  return c;
}

/** An HTTP server answering with `handler`; counts the requests it saw. */
async function stub(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<{
  url: string;
  count: () => number;
}> {
  let n = 0;
  const server: Server = createHttpServer((req, res) => {
    n += 1;
    req.resume();
    req.on('end', () => handler(req, res, n));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => n };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

describe(TallyClient.name, () => {
  describe('Tally unreachable (a closed port)', () => {
    it('open: allows, degraded with the client_unreachable cause', async () => {
      const sut = client(`http://127.0.0.1:${await freePort()}`, { failMode: 'open' });

      const res = await sut.decide(request);

      expect(res).toMatchObject({
        status: 200,
        allowed: true,
        degraded: true,
        degraded_cause: 'client_unreachable',
        decision_id: null,
        failure: { kind: 'connection', message: expect.stringContaining('ECONNREFUSED') },
      });
    });

    it('closed: refuses with backend_unavailable and a Retry-After to relay', async () => {
      const sut = client(`http://127.0.0.1:${await freePort()}`, { failMode: 'closed' });

      const res = await sut.decide(request);

      expect(res).toMatchObject({
        status: 503,
        allowed: false,
        reason: 'backend_unavailable',
        code: 'backend.unavailable',
        degraded: false,
        rateLimitHeaders: { 'retry-after': '1' },
      });
    });

    it('a call may override the client’s fail mode', async () => {
      const sut = client(`http://127.0.0.1:${await freePort()}`, { failMode: 'open' });

      const res = await sut.decide(request, { failMode: 'closed' });

      expect(res.status).toBe(503);
    });

    it('applies the fail mode to every item of a batch', async () => {
      const sut = client(`http://127.0.0.1:${await freePort()}`, { failMode: 'closed' });

      const res = await sut.decideBatch([request, request]);

      expect(res).toMatchObject([
        { ok: true, decision: { status: 503, reason: 'backend_unavailable' } },
        { ok: true, decision: { status: 503, reason: 'backend_unavailable' } },
      ]);
    });
  });

  describe('Tally too slow', () => {
    it('gives up at the deadline and applies the fail mode', async () => {
      // Accepts connections and never answers.
      const sockets: Socket[] = [];
      const server = createNetServer((s) => sockets.push(s));
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      cleanups.push(() => {
        for (const s of sockets) s.destroy();
        server.close();
      });
      const sut = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { failMode: 'open' });

      const started = Date.now();
      const res = await sut.decide(request, { timeoutMs: 150 });
      const elapsed = Date.now() - started;

      expect(res).toMatchObject({ allowed: true, degraded: true, failure: { kind: 'timeout' } });
      expect(elapsed).toBeGreaterThanOrEqual(140);
      expect(elapsed).toBeLessThan(1500);
    });

    it('rejects with the caller’s abort reason, applying no fail mode', async () => {
      const api = await stub((_req, res) => setTimeout(() => json(res, 200, DECISION), 1000));
      const sut = client(api.url);
      const controller = new AbortController();

      const call = sut.decide(request, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('caller gave up')), 50);

      await expect(call).rejects.toThrow('caller gave up');
    });
  });

  describe('Tally failing without a decision', () => {
    it.each([
      [500, { code: 'internal', message: 'internal error' }],
      [502, 'Bad Gateway'],
      [503, { code: 'server.overloaded', message: 'too many requests in flight' }],
    ])('a %i applies the fail mode', async (status, body) => {
      const api = await stub((_req, res) => json(res, status, body));
      const sut = client(api.url, { failMode: 'closed' });

      const res = await sut.decide(request);

      expect(res).toMatchObject({
        status: 503,
        reason: 'backend_unavailable',
        failure: { kind: 'server_error' },
      });
    });

    it('a decision 503 (the server’s fail_closed) is the server’s answer, not the client’s', async () => {
      const refused = {
        ...DECISION,
        allowed: false,
        reason: 'backend_timeout',
        code: 'backend.timeout',
        retry_after_ms: 1000,
      };
      const api = await stub((_req, res) => json(res, 503, refused, { 'retry-after': '1' }));
      const sut = client(api.url, { failMode: 'open' });

      const res = await sut.decide(request);

      expect(res).toMatchObject({
        status: 503,
        allowed: false,
        reason: 'backend_timeout',
        rateLimitHeaders: { 'retry-after': '1' },
      });
      expect(res.failure).toBeUndefined();
    });
  });

  describe('retries', () => {
    /** Breaks the first connection mid-request, answers every later one. */
    const breakFirst = (req: IncomingMessage, res: ServerResponse, n: number): void => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, DECISION);
    };

    it('retries an idempotent request once after a broken connection', async () => {
      const api = await stub(breakFirst);
      const sut = client(api.url, { failMode: 'closed' });

      const res = await sut.decide({ ...request, idempotency_key: 'k-1' });

      expect(res).toMatchObject({ status: 200, allowed: true });
      expect(api.count()).toBe(2);
    });

    it('never retries a request without an idempotency key: it may have been counted', async () => {
      const api = await stub(breakFirst);
      const sut = client(api.url, { failMode: 'closed' });

      const res = await sut.decide(request);

      expect(res).toMatchObject({ status: 503, failure: { kind: 'connection' } });
      expect(api.count()).toBe(1);
    });

    it('retries at most once', async () => {
      const api = await stub((req) => req.socket.destroy());
      const sut = client(api.url, { failMode: 'open' });

      const res = await sut.decide({ ...request, idempotency_key: 'k-2' });

      expect(res).toMatchObject({ degraded: true, failure: { kind: 'connection' } });
      expect(api.count()).toBe(2);
    });
  });

  it('sends the bearer token and JSON body on a kept-alive connection', async () => {
    const seen: { auth?: string; body: string; port?: number }[] = [];
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body, port: req.socket.remotePort });
        json(res, 200, DECISION);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(
      () =>
        new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
    );
    const sut = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);

    await sut.decide({ ...request, cost: 3 });
    await sut.decide(request);

    expect(seen[0]).toMatchObject({
      auth: 'Bearer caller-token',
      body: JSON.stringify({ ...request, cost: 3 }),
    });
    expect(seen[1].port).toBe(seen[0].port);
  });
});
