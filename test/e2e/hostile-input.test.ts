/**
 * The decision API as a hostile caller meets it: the built app as a child process (its own logs at
 * `debug`), a private Redis, and ≥ 1,500 generated requests (fast-check: bodies, selectors, costs,
 * idempotency keys, headers, methods and routes, batches) plus a table of framework-level cases sent
 * on raw sockets. Every case is invalid by construction, so each must be a 4xx whose `code` is in the
 * vocabulary (ERROR_CODES), never a 5xx, never a hang. After the whole run: Redis holds exactly what
 * it held before (nothing consumed, nothing half-written), the windows peek full, and the raw `token`
 * selector value is found nowhere — not in Redis keys or values, logs, metrics or any answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@tally/errors';
import { buildTree, eventually, freePort, PrivateRedis } from '@tally/testing';
import {
  hostileBatches,
  hostileBodies,
  hostileCosts,
  hostileHeaders,
  hostileIdempotencyKeys,
  hostileRoutes,
  hostileSelectors,
  MAX_COST,
  RAW_TOKEN,
  TENANT,
  validRequest,
  type HostileCase,
} from './support/hostile.arbitraries';
import { OpenApiContract } from './support/openapi-contract';
import { rawRequest } from './support/raw-http';

const ROOT = resolve(__dirname, '../..');
const CALLER = 'hostile-caller-token-0123456789';
const ADMIN = 'hostile-admin-token-0123456789';
const BODY_LIMIT = 262_144;
const POLICIES = `
policies:
  - name: hostile-tenant
    key: [tenant, principal]
    max_cost: ${MAX_COST}
    windows:
      - { name: minute, role: burst, algorithm: fixed_window, limit: 50, period: 1m }
      - { name: day, role: sustained, algorithm: sliding_window, limit: 1000, period: 1d }
  - name: hostile-token
    match: { route: [tokened] }
    key: [token]
    windows:
      - { name: hour, role: sustained, algorithm: token_bucket, limit: 100, period: 1h }
`;
const LIMITS: Record<string, number> = { minute: 50, day: 1000, hour: 100 };
/** Cases per generator: 1,550 in all, before the framework table. */
const RUNS = { bodies: 250, selectors: 300, costs: 250, keys: 250, headers: 200, routes: 150, batches: 150 };

let redis: PrivateRedis;
let dir: string;
let api: ChildProcess;
let port: number;
const logs: string[] = [];
/** Every answer's status line, headers and body, for the leak check. */
const answers: string[] = [];
let sent = 0;
/** The API's served OpenAPI document: every answer of a documented operation must conform to it. */
let contract: OpenApiContract;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  await mkdir(join(ROOT, '.local'), { recursive: true });
  // Inside the repository, so the built app resolves the project's node_modules.
  dir = await mkdtemp(join(ROOT, '.local', 'hostile-'));
  await buildTree(join(dir, 'out'), ['decision-api']);
  await writeFile(join(dir, 'policies.yaml'), POLICIES);
  [port] = [await freePort()];
  api = spawn(process.execPath, [join(dir, 'out/apps/decision-api/src/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      REDIS_URL: redis.url,
      TALLY_POLICIES: join(dir, 'policies.yaml'),
      TALLY_API_TOKENS: CALLER,
      TALLY_ADMIN_TOKEN: ADMIN,
      TALLY_TOKEN_SECRET: 'hostile-token-secret-0123456789',
      TALLY_HTTP_PORT: String(port),
      TALLY_GRPC_PORT: String(await freePort()),
      TALLY_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      // Everything the app would ever log about a request is in the leak check.
      TALLY_LOG_LEVEL: 'debug',
      // One process: the suite's assertions (one pid, its metrics) are about a single worker.
      TALLY_WORKERS: '1',
      TALLY_BACKEND_TIMEOUT_MS: '5000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout?.on('data', (d: Buffer) => logs.push(String(d)));
  api.stderr?.on('data', (d: Buffer) => logs.push(String(d)));
  const ready = await eventually(
    () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      ),
    (ok) => ok || api.exitCode !== null,
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  if (!ready) throw new Error(`decision-api did not get ready: ${logs.join('').slice(-2000)}`);
  contract = await OpenApiContract.fetch(`http://127.0.0.1:${port}`);
}, 240_000);

afterAll(async () => {
  if (api && api.exitCode === null) {
    const exited = new Promise((done) => api.once('exit', done));
    api.kill('SIGTERM');
    await exited;
  }
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Every key with its type and whole value, as one comparable map (TTLs left out: they tick). */
async function snapshot(client: Redis): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const keys = (await client.keys('*')).sort();
  for (const key of keys) {
    const type = await client.type(key);
    let value: unknown;
    if (type === 'string') value = await client.get(key);
    else if (type === 'hash') value = Object.entries(await client.hgetall(key)).sort();
    else if (type === 'stream') value = await client.xrange(key, '-', '+');
    else if (type === 'zset') value = await client.zrange(key, 0, '-1', 'WITHSCORES');
    else if (type === 'set') value = (await client.smembers(key)).sort();
    else if (type === 'list') value = await client.lrange(key, 0, -1);
    out.set(key, `${type} ${JSON.stringify(value)}`);
  }
  return out;
}

async function send(c: HostileCase): Promise<{ status: number; text: string; json: unknown }> {
  const headers: Record<string, string> = { ...c.extraHeaders };
  const auth = c.authorization === undefined ? `Bearer ${CALLER}` : c.authorization;
  if (auth !== null) headers.authorization = auth;
  if (c.body !== undefined) headers['content-type'] = c.contentType ?? 'application/json';
  sent += 1;
  const res = await fetch(`http://127.0.0.1:${port}${c.path}`, {
    method: c.method,
    headers,
    body: c.body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const template = contract.templateOf(c.method, c.path);
  if (template !== undefined) contract.expectConforms(c.method, template, { status: res.status, body: json });
  return { status: res.status, text, json };
}

/** A refusal in the contract: a 4xx whose body is `{code, message}` with a code of the vocabulary. */
function expectRefusal(status: number, body: unknown, what: string): void {
  expect(status, what).toBeGreaterThanOrEqual(400);
  expect(status, what).toBeLessThan(500);
  const code = (body as { code?: unknown } | undefined)?.code;
  expect(Object.keys(ERROR_CODES), `${what}: code ${String(code)}`).toContain(code);
  expect(typeof (body as { message?: unknown }).message, what).toBe('string');
}

async function peek(): Promise<Record<string, number>> {
  const res = await send({
    method: 'POST',
    path: '/v1/decisions',
    body: JSON.stringify({ ...validRequest(), cost: 0 }),
  });
  expect(res.status).toBe(200);
  const policies = (res.json as { policies: { windows: { name: string; remaining: number }[] }[] }).policies;
  return Object.fromEntries(policies.flatMap((p) => p.windows.map((w) => [w.name, w.remaining])));
}

const FRAMEWORK_CASES: readonly { name: string; raw: string }[] = [
  { name: 'a malformed percent-escape', raw: 'GET /v1/policies/%zz/state HTTP/1.1\r\nHost: x\r\n\r\n' },
  {
    name: 'a truncated percent-escape',
    raw: 'POST /v1/decisions%E0%A4%A HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
  },
  {
    name: 'a path parameter of 500 characters',
    raw: `GET /v1/policies/${'a'.repeat(500)}/state HTTP/1.1\r\nHost: x\r\n\r\n`,
  },
  {
    name: 'a non-numeric content-length',
    raw: 'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}',
  },
  {
    name: 'content-length and chunked together',
    raw: 'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  },
  {
    name: 'a bad chunk size',
    raw: 'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
  },
  {
    name: 'headers of 40 KiB',
    raw: `GET /v1/decisions HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`,
  },
  { name: 'an unknown method', raw: 'FROB /v1/decisions HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'a garbage request line', raw: 'HELLO THERE\r\n\r\n' },
  { name: 'a space in a header name', raw: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n' },
  { name: 'no Host header', raw: 'GET /v1/decisions HTTP/1.1\r\n\r\n' },
  {
    name: 'a body over the limit by its length',
    raw: `POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CALLER}\r\nContent-Type: application/json\r\nContent-Length: ${BODY_LIMIT * 4}\r\n\r\n{`,
  },
  {
    name: 'the raw token in a 404 query',
    raw: `GET /nowhere?token=${RAW_TOKEN} HTTP/1.1\r\nHost: x\r\n\r\n`,
  },
  {
    name: 'the raw token in a 405 query',
    raw: `DELETE /v1/decisions?token=${RAW_TOKEN} HTTP/1.1\r\nHost: x\r\n\r\n`,
  },
  {
    name: 'an absolute-form target',
    raw: `GET http://elsewhere.example/v1/x?token=${RAW_TOKEN} HTTP/1.1\r\nHost: x\r\n\r\n`,
  },
  { name: 'a NUL in the target', raw: 'GET /v1/\u0000decisions HTTP/1.1\r\nHost: x\r\n\r\n' },
  {
    name: '20,000 nested arrays',
    raw: `POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CALLER}\r\nContent-Type: application/json\r\nContent-Length: 40009\r\n\r\n{"cost":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
  },
  {
    name: 'a JSON body shorter than its content-length, then closed',
    raw: `POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CALLER}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"selectors":{"tenant":"${RAW_TOKEN}"}}`,
  },
  {
    name: 'two authorization headers',
    raw: `POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CALLER}\r\nAuthorization: Bearer ${RAW_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
  },
  {
    name: 'a Basic authorization header',
    raw: `POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from(`u:${RAW_TOKEN}`).toString('base64')}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
  },
];

describe('hostile input against the decision API', () => {
  let before: Map<string, string>;
  let full: Record<string, number>;

  it('starts from windows that peek full', async () => {
    full = await peek();
    expect(full).toEqual(LIMITS);
    before = await snapshot(redis.client);
  });

  const properties: [string, fc.Arbitrary<HostileCase>, number][] = [
    ['bodies that are not a decision', hostileBodies, RUNS.bodies],
    ['selectors and attributes that identify no one', hostileSelectors, RUNS.selectors],
    ['costs out of range or of the wrong type', hostileCosts, RUNS.costs],
    ['idempotency keys outside their alphabet and length', hostileIdempotencyKeys, RUNS.keys],
    ['wrong tokens and media types', hostileHeaders, RUNS.headers],
    ['methods and routes that do not exist', hostileRoutes, RUNS.routes],
  ];
  it.each(properties)('answers %s with a 4xx of the vocabulary', async (_name, arbitrary, numRuns) => {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (c) => {
        const res = await send(c);
        expectRefusal(res.status, res.json, `${c.method} ${c.path} ${c.body?.slice(0, 200) ?? ''}`);
      }),
      { numRuns },
    );
  });

  it('answers batches with a bad envelope 4xx and each bad item 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(hostileBatches, async (c) => {
        const res = await send(c);
        const what = `batch ${c.body?.slice(0, 200) ?? ''}`;
        if (res.status !== 200) return expectRefusal(res.status, res.json, what);
        const results = (res.json as { results: { status: number }[] }).results;
        expect(results.length, what).toBeGreaterThan(0);
        for (const r of results) expectRefusal(r.status, r, what);
      }),
      { numRuns: RUNS.batches },
    );
  });

  it.each(FRAMEWORK_CASES)('answers $name with a 4xx of the vocabulary', async ({ raw }) => {
    sent += 1;
    const res = await rawRequest(port, raw);
    answers.push(res.text + res.body);
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = { code: `(not JSON: ${res.body.slice(0, 80)})` };
    }
    expectRefusal(res.status, body, raw.slice(0, 80));
  });

  it('consumed nothing and wrote nothing: Redis is as it was, the windows peek full', async () => {
    expect(sent).toBeGreaterThanOrEqual(1500);
    const after = await snapshot(redis.client);
    expect([...after.keys()]).toEqual([...before.keys()]);
    expect(after).toEqual(before);
    expect(await peek()).toEqual(full);
  });

  it('let the raw token reach no key, value, log line, metric or answer', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const stored = [...(await snapshot(redis.client))].join('\n');
    for (const [where, text] of Object.entries({
      redis: stored,
      logs: logs.join(''),
      metrics,
      answers: answers.join('\n'),
    })) {
      expect(text.includes(RAW_TOKEN), `raw token found in ${where}`).toBe(false);
    }
    // The logs are not empty by accident: debug logging saw the run.
    expect(logs.join('').length).toBeGreaterThan(0);
  });

  it('still decides: one valid decision consumes, keyed by the token HMAC, never the token', async () => {
    // Given the same API after the hostile run; when one valid decision is made
    const res = await send({ method: 'POST', path: '/v1/decisions', body: JSON.stringify(validRequest()) });
    // then it is allowed and consumes one unit of every window, so the checks above could see a change
    expect(res.status).toBe(200);
    expect(await peek()).toEqual(Object.fromEntries(Object.entries(full).map(([k, v]) => [k, v - 1])));
    const after = await snapshot(redis.client);
    expect(after).not.toEqual(before);
    const keys = [...after.keys()].join('\n');
    expect(keys).toContain(TENANT);
    expect(keys).toMatch(/t_[A-Za-z0-9_-]{22}/);
    expect([...after].join('\n').includes(RAW_TOKEN)).toBe(false);
  });
});
