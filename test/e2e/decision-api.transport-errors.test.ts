/**
 * What the router, the parsers and the HTTP server refuse, over raw sockets against the real decision
 * API (real Redis): every such answer is in the error contract — a JSON `{code, message}` whose code
 * and status the vocabulary (ERROR_CODES) documents — and none repeats the query string or a header
 * value: each case carries a secret where a careless message would echo it. Nothing is consumed.
 */
import { connect } from 'node:net';
import { ERROR_CODES, isErrorCode } from '@tally/errors';
import { MAX_JSON_DEPTH } from '@tally/http';
import { eventually, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_TOKEN, CALLER_TOKEN, DecisionApiHarness } from './support/decision-api.harness';

const BODY_LIMIT = 65_536;
const SECRET = 'sk-live-0c7f3e1d9a5b4e28';
const run = uniqueName('e2e-transport');
const POLICY = `${run}-p`;
const selectors = { tenant: run, principal: 'svc-1' };

let sut: DecisionApiHarness;
let port: number;

beforeAll(async () => {
  sut = await DecisionApiHarness.start({
    redisUrl: inject('redisUrl'),
    env: { TALLY_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
    policies: `
policies:
  - name: ${POLICY}
    key: [tenant, principal]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }
`,
  });
  port = Number(new URL(sut.baseUrl).port);
});
afterAll(async () => {
  await sut.close();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly text: string;
}

/** Sends bytes as they are and reads the first answer; the server closes the connection after it. */
function send(bytes: string): Promise<RawAnswer> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    // The server must end every one of these connections itself: waiting for it is part of the test.
    let timedOut = false;
    socket.setTimeout(10_000, () => {
      timedOut = true;
      socket.destroy();
    });
    socket.on('close', () => {
      if (timedOut)
        return fail(new Error(`the server left the connection open: ${JSON.stringify(text.slice(0, 200))}`));
      const head = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (head < 0 || !status)
        return fail(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, head).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      done({ status: Number(status[1]), headers, body: text.slice(head + 4, head + 4 + length), text });
    });
    socket.write(bytes, 'latin1');
  });
}

const CRLF = '\r\n';
const CALLER = `Authorization: Bearer ${CALLER_TOKEN}`;
const ADMIN = `Authorization: Bearer ${ADMIN_TOKEN}`;

/**
 * A request: request line, header lines, body. It asks for `Connection: close` (the answer is then the
 * last thing on the connection) unless `keepAlive`: then only the server can decide to close it.
 */
function http(
  line: string,
  headers: readonly string[] = [],
  body = '',
  { host = true, keepAlive = false } = {},
): string {
  const all = [...(host ? ['Host: 127.0.0.1'] : []), ...(keepAlive ? [] : ['Connection: close']), ...headers];
  return [line, ...all].join(CRLF) + CRLF + CRLF + body;
}
function json(line: string, body: string, headers: readonly string[] = [CALLER]): string {
  return http(
    line,
    ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...headers],
    body,
  );
}

const deep = (depth: number): string => `{"selectors":${'['.repeat(depth)}${']'.repeat(depth)}}`;

interface Case {
  readonly name: string;
  readonly bytes: string;
  readonly status: number;
  readonly code: string;
  readonly headers?: Record<string, string>;
}

const CASES: readonly Case[] = [
  // the router
  {
    name: 'an unknown path, a token in its query',
    bytes: http(`GET /v1/nowhere?token=${SECRET} HTTP/1.1`),
    status: 404,
    code: 'route.not_found',
  },
  {
    name: 'an unknown path, its body still coming, no token (no 401; answered and closed at once)',
    bytes: http(
      `POST /v1/nowhere?token=${SECRET} HTTP/1.1`,
      ['Content-Type: application/json', 'Content-Length: 4096'],
      '{"a',
      { keepAlive: true },
    ),
    status: 404,
    code: 'route.not_found',
  },
  {
    name: 'a malformed percent-escape',
    bytes: http(`GET /v1/policies/%E0%A4%A/state?token=${SECRET} HTTP/1.1`, [ADMIN]),
    status: 400,
    code: 'request.invalid_url',
  },
  {
    name: 'a malformed percent-escape on the hot path',
    bytes: json(`POST /v1/decisions%ZZ?token=${SECRET} HTTP/1.1`, '{}'),
    status: 400,
    code: 'request.invalid_url',
  },
  {
    name: 'a path parameter over 100 characters',
    bytes: http(`GET /v1/policies/${SECRET}${'a'.repeat(100)}/state HTTP/1.1`, [ADMIN]),
    status: 414,
    code: 'request.uri_too_long',
  },
  {
    name: 'a method the route does not take',
    bytes: http(`PATCH /v1/decisions?token=${SECRET} HTTP/1.1`, [CALLER]),
    status: 405,
    code: 'route.method_not_allowed',
    headers: { allow: 'POST' },
  },
  {
    name: 'DELETE on a probe',
    bytes: http('DELETE /healthz HTTP/1.1'),
    status: 405,
    code: 'route.method_not_allowed',
    headers: { allow: 'GET, HEAD' },
  },
  { name: 'OPTIONS *', bytes: http('OPTIONS * HTTP/1.1'), status: 404, code: 'route.not_found' },
  {
    name: 'CONNECT',
    bytes: http('CONNECT 127.0.0.1:443 HTTP/1.1'),
    status: 405,
    code: 'route.method_not_allowed',
  },
  // Node's HTTP parser
  {
    name: 'a method token no parser knows',
    bytes: http(`FROB /v1/decisions?token=${SECRET} HTTP/1.1`),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'a request line of garbage',
    bytes: `${SECRET}\r\n\r\n`,
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'an unknown HTTP version',
    bytes: http('GET /healthz HTTP/3.7'),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'a header name with a space',
    bytes: http('GET /healthz HTTP/1.1', [`X Token: ${SECRET}`]),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'a control character in a header value',
    bytes: http('GET /healthz HTTP/1.1', [`X-Token: ${SECRET}\x01`]),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'headers over 16 KiB',
    bytes: http('GET /healthz HTTP/1.1', [`X-Token: ${SECRET}${'a'.repeat(20_000)}`]),
    status: 431,
    code: 'request.header_too_large',
  },
  {
    name: 'a content-length that is not a number',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      [CALLER, 'Content-Type: application/json', 'Content-Length: 1e3'],
      '{}',
    ),
    status: 400,
    code: 'request.invalid_content_length',
  },
  {
    name: 'two different content-lengths',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      [CALLER, 'Content-Type: application/json', 'Content-Length: 2', 'Content-Length: 3'],
      '{}',
    ),
    status: 400,
    code: 'request.invalid_content_length',
  },
  {
    name: 'content-length with transfer-encoding (smuggling)',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      [CALLER, 'Content-Type: application/json', 'Content-Length: 2', 'Transfer-Encoding: chunked'],
      '2\r\n{}\r\n0\r\n\r\n',
    ),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'a chunk size that is not hexadecimal',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      [CALLER, 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
      'zz\r\n{}\r\n0\r\n\r\n',
    ),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'an HTTP/1.1 request without Host',
    bytes: http(`GET /healthz?token=${SECRET} HTTP/1.1`, [], '', { host: false }),
    status: 400,
    code: 'request.malformed_http',
  },
  {
    name: 'an Expect other than 100-continue',
    bytes: http('GET /healthz HTTP/1.1', [`Expect: ${SECRET}`]),
    status: 417,
    code: 'request.expectation_failed',
  },
  // bodies
  {
    name: 'a body over the limit, announced',
    bytes: http('POST /v1/decisions HTTP/1.1', [
      CALLER,
      'Content-Type: application/json',
      `Content-Length: ${BODY_LIMIT + 1}`,
    ]),
    status: 413,
    code: 'request.too_large',
  },
  {
    name: 'a body nested 10,000 levels deep',
    bytes: json('POST /v1/decisions HTTP/1.1', deep(10_000)),
    status: 400,
    code: 'request.invalid',
  },
  {
    name: `a body one level deeper than ${MAX_JSON_DEPTH}`,
    bytes: json('POST /v1/decisions HTTP/1.1', deep(MAX_JSON_DEPTH)),
    status: 400,
    code: 'request.invalid',
  },
  {
    name: 'a batch nested 10,000 levels deep',
    bytes: json('POST /v1/decisions:batch HTTP/1.1', `{"requests":[${deep(10_000)}]}`),
    status: 400,
    code: 'request.invalid',
  },
  {
    name: 'a deep body on a Nest route',
    bytes: json('POST /v1/policies:reload HTTP/1.1', deep(10_000), [ADMIN]),
    status: 400,
    code: 'request.invalid',
  },
  {
    name: 'a body that is not JSON',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      [CALLER, 'Content-Type: text/plain', 'Content-Length: 2'],
      'hi',
    ),
    status: 415,
    code: 'request.unsupported_media_type',
  },
  // authentication, from the headers
  {
    name: 'no token, a token in the query instead',
    bytes: json(`POST /v1/decisions?token=${SECRET} HTTP/1.1`, JSON.stringify({ selectors }), []),
    status: 401,
    code: 'auth.missing',
  },
  {
    name: 'no token, the body still coming (answered and closed at once)',
    bytes: http(
      'POST /v1/decisions HTTP/1.1',
      ['Content-Type: application/json', 'Content-Length: 4096'],
      '{"se',
      { keepAlive: true },
    ),
    status: 401,
    code: 'auth.missing',
    headers: { connection: 'close' },
  },
  {
    name: 'a token that is not accepted',
    bytes: json('POST /v1/decisions HTTP/1.1', JSON.stringify({ selectors }), [
      `Authorization: Bearer ${SECRET}`,
    ]),
    status: 401,
    code: 'auth.invalid',
  },
  {
    name: 'a caller token on a control endpoint',
    bytes: http(`GET /v1/policies?token=${SECRET} HTTP/1.1`, [CALLER]),
    status: 403,
    code: 'auth.forbidden',
  },
];

describe('decision-api transport errors', () => {
  let before: Record<string, number>;
  beforeAll(async () => {
    before = await sut.remaining(POLICY, selectors);
  });

  it.each(CASES)('answers $name with $status $code, in the contract, echoing nothing', async (c) => {
    const res = await send(c.bytes);

    expect(res.status).toBe(c.status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ code: c.code, message: expect.any(String) });
    expect(Object.keys(body).filter((k) => !['code', 'message', 'errors'].includes(k))).toEqual([]);
    expect(isErrorCode(body.code) && (ERROR_CODES[body.code].statuses as readonly number[])).toContain(
      c.status,
    );
    expect(res.headers).toMatchObject(c.headers ?? {});
    expect(res.text).not.toContain(SECRET);
  });

  it('consumed nothing', async () => {
    expect(await sut.remaining(POLICY, selectors)).toEqual(before);
  });
});

describe('decision-api readiness', () => {
  it('shows each component state to anyone, and no detail', async () => {
    const res = await sut.call<{ status: string; components: Record<string, object> }>('GET', '/readyz', {
      token: null,
    });

    expect(res.status).toBe(200);
    expect(res.body.components).toEqual({ redis: { status: 'up' }, policies: { status: 'up' } });
  });

  it.each([
    ['a caller token', CALLER_TOKEN],
    ['a wrong token', SECRET],
  ])('shows no detail to %s either', async (_name, token) => {
    const res = await sut.call<{ components: Record<string, object> }>('GET', '/readyz', { token });

    expect(res.body.components).toEqual({ redis: { status: 'up' }, policies: { status: 'up' } });
  });

  it('shows the details to the admin token', async () => {
    const res = await sut.call<{ components: Record<string, { detail?: string }> }>('GET', '/readyz', {
      token: ADMIN_TOKEN,
    });

    expect(res.body.components.redis.detail).toMatch(/^breaker /);
    expect(res.body.components.policies.detail).toMatch(/^version /);
  });
});

describe('decision-api while closing', () => {
  it('answers a request that arrives on an open connection while closing 503 server.shutting_down', async () => {
    // given an instance of its own, and a caller's connection in the middle of a request
    const api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: 'policies: []\n' });
    const fastify = api.app.getHttpAdapter().getInstance();
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(api.baseUrl).port) });
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    await new Promise<void>((done) => socket.once('connect', () => done()));
    const body = JSON.stringify({ selectors });
    socket.write(
      `POST /v1/decisions HTTP/1.1\r\nHost: 127.0.0.1\r\n${CALLER}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    // (the server says 100 Continue as it dispatches the request: it is past routing and the gate)
    await eventually(
      () => received,
      (text) => text.startsWith('HTTP/1.1 100 Continue\r\n\r\n'),
      {
        timeoutMs: 5_000,
        intervalMs: 10,
        what: '100 Continue',
      },
    );

    // when the server starts closing (it stops listening once its pre-close hooks ran)
    const closing = fastify.close();
    await eventually(
      () => fastify.server.listening,
      (listening) => !listening,
      {
        timeoutMs: 5_000,
        intervalMs: 10,
        what: 'the server to stop listening',
      },
    );
    // and the first request completes, and a second one follows on the same connection
    socket.write(`${body}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);

    // then the second is told the instance is closing, and the connection ends
    await closed;
    await closing;
    const answers = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(answers).toHaveLength(3);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 200 /);
    expect(answers[2]).toMatch(/^HTTP\/1\.1 503 /);
    expect(answers[2]).toContain('"code":"server.shutting_down"');
    await api.close().catch(() => undefined);
  });
});
