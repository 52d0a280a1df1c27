/**
 * Scoped tokens end to end: a decision API (HTTP and Envoy RLS gRPC) and a projector, in this
 * process, both reading one tokens file (`TALLY_TOKENS_FILE`) beside the simple form's environment
 * tokens, over real HTTP, a real Redis and the real broker. Roles and tenant allow-lists are judged on
 * every route, the file reloads live (watch and `POST /v1/tokens:reload`), a bad file is refused with
 * every error while the running set stays, and boot refuses an admin token that is also a caller token.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { credentials, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { ConfigError, loadConfig } from '@tally/config';
import { loadRateLimitService, type RlsRequest } from '@tally/envoy-rls';
import { tokenDigestHex, TokensLoadError } from '@tally/auth';
import { buildTree, eventually, PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import { InProcessProjector, RunTopics } from '../integration/projector.harness';
import { ADMIN_TOKEN, CALLER_TOKEN, DecisionApiHarness, metricSum } from './support/decision-api.harness';

const run = uniqueName('e2e-scoped');
const ACME = `${run}-acme`;
const GLOBEX = `${run}-globex`;
const POLICY = `${run}-p`;
const POLICIES = `
policies:
  - name: ${POLICY}
    unless: { route: lease }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
  - name: ${POLICY}-lease
    match: { route: lease }
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: 1, lease_ttl: 1m }
`;

/** The tokens of the file, by what they may do (the simple form's CALLER_TOKEN / ADMIN_TOKEN beside them). */
const T = {
  acmeDecide: `acme-decide-token-${run}`,
  reader: `reader-token-${run}`,
  acmeReader: `acme-reader-token-${run}`,
  acmeOps: `acme-ops-token-${run}`,
  late: `late-token-${run}`,
} as const;

interface Entry {
  readonly name: string;
  readonly token: string;
  readonly roles: readonly string[];
  readonly tenants?: readonly string[];
}

const ENTRIES: readonly Entry[] = [
  { name: 'acme-decide', token: T.acmeDecide, roles: ['decide'], tenants: [ACME] },
  { name: 'reader', token: T.reader, roles: ['query'] },
  { name: 'acme-reader', token: T.acmeReader, roles: ['query'], tenants: [ACME] },
  { name: 'acme-ops', token: T.acmeOps, roles: ['admin'], tenants: [ACME] },
];

/** A tokens file as an operator writes it: digests only, never the tokens. */
function tokensFile(entries: readonly Entry[]): string {
  const lines = entries.map((e) => {
    const tenants = e.tenants ? `, tenants: [${e.tenants.map((t) => JSON.stringify(t)).join(', ')}]` : '';
    return `  - { name: ${e.name}, sha256: ${tokenDigestHex(e.token)}, roles: [${e.roles.join(', ')}]${tenants} }`;
  });
  return `tokens:\n${lines.join('\n')}\n`;
}

/** How long a reload may take to be seen on a busy machine: file events, debounce, the next request. */
const RELOAD = { timeoutMs: 15_000, intervalMs: 50 } as const;

let dir: string;
let tokensPath: string;
let api: DecisionApiHarness;
let projectorRedis: PrivateRedis;
let topics: RunTopics;
let projector: InProcessProjector;
let grpc: Client;

/** Replaces the tokens file the way deploy tools do (write aside, rename over), which the watchers see. */
async function writeTokens(text: string): Promise<void> {
  const aside = join(dir, `.tokens.${Math.random().toString(36).slice(2)}.tmp`);
  await writeFile(aside, text);
  await rename(aside, tokensPath);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-scoped-'));
  tokensPath = join(dir, 'tokens.yaml');
  await writeFile(tokensPath, tokensFile(ENTRIES));
  const env = { TALLY_TOKENS_FILE: tokensPath };
  api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES, env });
  const grpcPort = await api.startGrpc();
  const { Client: RlsClient } = loadRateLimitService();
  grpc = new RlsClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  projectorRedis = await PrivateRedis.start();
  topics = new RunTopics(testEnv().kafkaBrokers, 'e2e-scoped-tokens');
  await topics.create();
  // The projector with the same simple-form tokens as the decision API, as one deployment has.
  projector = await InProcessProjector.start(projectorRedis.url, testEnv().kafkaBrokers, topics.overrides, {
    ...env,
    TALLY_API_TOKENS: CALLER_TOKEN,
    TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  // Queries answer once the projector has joined its group and made its namespace active.
  await eventually(
    () => usage(ACME, CALLER_TOKEN).then((r) => r.status),
    (s) => s === 200,
    {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the projector to serve queries',
    },
  );
});

afterAll(async () => {
  grpc?.close();
  await api?.close();
  await projector?.stop();
  await topics?.close();
  await projectorRedis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const decide = (tenant: string | undefined, token: string, cost = 1) =>
  api.decide({ selectors: tenant === undefined ? { principal: 'p' } : { tenant }, cost }, { token });
const usage = (tenant: string, token: string) =>
  projector.get(`/v1/usage?tenant=${encodeURIComponent(tenant)}&granularity=hour&${RANGE}`, token);
const RANGE = 'from=2026-01-01T00:00:00Z&to=2026-01-01T02:00:00Z';
const left = async (tenant: string) => (await api.remaining(POLICY, { tenant })).hourly;

describe('scoped tokens on the decision API', () => {
  it('lets a tenant-scoped decide token spend for its tenant and refuses another tenant with 403, consuming nothing', async () => {
    // given a token limited to acme
    // when it decides for acme, for globex, and without a tenant
    const own = await decide(ACME, T.acmeDecide, 2);
    const other = await decide(GLOBEX, T.acmeDecide, 2);
    const none = await decide(undefined, T.acmeDecide);

    // then acme is charged, globex is untouched, and the refusals are auth.forbidden
    expect(own.status).toBe(200);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ code: 'auth.forbidden', message: 'this token may not act for this tenant' });
    expect(none.status).toBe(403);
    expect(none.body).toMatchObject({ code: 'auth.forbidden' });
    expect(await left(ACME)).toBe(98);
    expect(await left(GLOBEX)).toBe(100);
  });

  it('lets a tenant-scoped token release and extend the leases of its tenants only (403 otherwise, the lease kept)', async () => {
    const take = (tenant: string, token: string) =>
      api.decide<{ lease?: { id: string } }>({ selectors: { tenant, route: 'lease' }, cost: 1 }, { token });
    const release = (id: string, token: string) =>
      api.call<{ code?: string; outcome?: string }>('POST', `/v1/leases/${id}:release`, { token });
    const acme = await take(ACME, T.acmeDecide);
    const globex = await take(GLOBEX, CALLER_TOKEN);
    expect([acme.status, globex.status]).toEqual([200, 200]);

    const foreign = await release(globex.body.lease?.id ?? '', T.acmeDecide);
    const reader = await release(acme.body.lease?.id ?? '', T.reader);

    expect([foreign.status, foreign.body.code]).toEqual([403, 'auth.forbidden']);
    expect([reader.status, reader.body.code]).toEqual([403, 'auth.forbidden']);
    expect((await take(GLOBEX, CALLER_TOKEN)).status).toBe(429); // still held
    // extending is judged the same way, and a refused extension leaves the expiry as it was
    const extend = (id: string, token: string) =>
      api.call<{ code?: string; expires_at?: string }>('POST', `/v1/leases/${id}:extend`, { token });
    const foreignExtend = await extend(globex.body.lease?.id ?? '', T.acmeDecide);
    const readerExtend = await extend(acme.body.lease?.id ?? '', T.reader);
    expect([foreignExtend.status, foreignExtend.body.code]).toEqual([403, 'auth.forbidden']);
    expect([readerExtend.status, readerExtend.body.code]).toEqual([403, 'auth.forbidden']);
    expect((await extend(acme.body.lease?.id ?? '', T.acmeDecide)).status).toBe(200);
    expect((await release(acme.body.lease?.id ?? '', T.acmeDecide)).body.outcome).toBe('released');
    expect((await release(globex.body.lease?.id ?? '', CALLER_TOKEN)).body.outcome).toBe('released');
  });

  it('judges every batch item on its own: out-of-scope items get their own 403, the others are decided', async () => {
    const res = await api.call<{ results: { status: number; code: string | null }[] }>(
      'POST',
      '/v1/decisions:batch',
      {
        token: T.acmeDecide,
        body: {
          requests: [
            { selectors: { tenant: ACME }, cost: 1 },
            { selectors: { tenant: GLOBEX }, cost: 1 },
            { selectors: { tenant: ` ${ACME} ` }, cost: 1 },
          ],
        },
      },
    );

    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => [r.status, r.code])).toEqual([
      [200, null],
      [403, 'auth.forbidden'],
      [200, null],
    ]);
    expect(await left(GLOBEX)).toBe(100);
  });

  it('refuses decisions to a query-only token and to the admin token (403, nothing consumed)', async () => {
    const tenant = uniqueName('t');

    for (const token of [T.reader, T.acmeReader, ADMIN_TOKEN, T.acmeOps]) {
      const res = await decide(tenant, token);
      expect([res.status, res.body.code]).toEqual([403, 'auth.forbidden']);
    }
    expect(await left(tenant)).toBe(100);
  });

  it('lets the simple form caller token decide on every tenant', async () => {
    expect((await decide(GLOBEX, CALLER_TOKEN, 0)).status).toBe(200);
    // past authentication, the policy's own rule: its key needs a tenant
    expect((await decide(undefined, CALLER_TOKEN, 0)).body.code).toBe('selector.identity_missing');
  });

  it('lets a tenant-scoped admin token peek at its tenants only, and nothing about every tenant', async () => {
    const state = (tenant: string, token: string) =>
      api.call('GET', `/v1/policies/${POLICY}/state?tenant=${encodeURIComponent(tenant)}`, { token });

    expect((await state(ACME, T.acmeOps)).status).toBe(200);
    expect((await state(GLOBEX, T.acmeOps)).body).toMatchObject({ code: 'auth.forbidden' });
    expect((await state(GLOBEX, ADMIN_TOKEN)).status).toBe(200);
    expect((await state(ACME, T.acmeDecide)).body).toMatchObject({ code: 'auth.forbidden' });
    for (const [method, path] of [
      ['GET', '/v1/policies'],
      ['POST', '/v1/policies:reload'],
      ['POST', '/v1/tokens:reload'],
    ] as const) {
      const res = await api.call(method, path, { token: T.acmeOps });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'auth.forbidden']);
    }
  });

  describe('over Envoy RLS gRPC', () => {
    const call = (tenant: string, token: string): Promise<{ code: status; ok: boolean }> => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${token}`);
      const request: RlsRequest = {
        domain: 'edge',
        descriptors: [{ entries: [{ key: 'tenant', value: tenant }] }],
      };
      type Unary = (r: RlsRequest, m: Metadata, done: (error: ServiceError | null) => void) => void;
      const method = (grpc as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(grpc);
      return new Promise((done) =>
        method(request, metadata, (error) => done({ code: error?.code ?? status.OK, ok: error === null })),
      );
    };

    it('applies the same roles and tenants: PERMISSION_DENIED out of scope, nothing consumed', async () => {
      const tenant = uniqueName('grpc');

      expect(await call(ACME, T.acmeDecide)).toEqual({ code: status.OK, ok: true });
      expect(await call(tenant, T.acmeDecide)).toEqual({ code: status.PERMISSION_DENIED, ok: false });
      expect(await call(tenant, T.reader)).toEqual({ code: status.PERMISSION_DENIED, ok: false });
      expect(await call(tenant, 'no-such-token-0123456789')).toEqual({
        code: status.UNAUTHENTICATED,
        ok: false,
      });
      expect(await left(tenant)).toBe(100);
    });
  });
});

describe('scoped tokens on the projector', () => {
  it('lets a decide-only token query nothing', async () => {
    const res = await usage(ACME, T.acmeDecide);

    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      code: 'auth.forbidden',
      message: 'this call needs a token with the query role',
    });
  });

  it('lets a tenant-scoped reader read its tenant only; the tenant-less trail needs an unscoped token', async () => {
    const cases: [string, string, number][] = [
      [`/v1/usage?tenant=${ACME}&${RANGE}`, T.acmeReader, 200],
      [`/v1/usage?tenant=${GLOBEX}&${RANGE}`, T.acmeReader, 403],
      [`/v1/top-keys?tenant=${ACME}&policy=${POLICY}`, T.acmeReader, 200],
      [`/v1/top-keys?tenant=${GLOBEX}&policy=${POLICY}`, T.acmeReader, 403],
      [`/v1/audit?tenant=${ACME}`, T.acmeReader, 200],
      [`/v1/audit?tenant=${GLOBEX}`, T.acmeReader, 403],
      ['/v1/audit', T.acmeReader, 403],
      ['/v1/audit', T.reader, 200],
      [`/v1/usage?tenant=${GLOBEX}&${RANGE}`, T.reader, 200],
      [`/v1/usage?tenant=${GLOBEX}&${RANGE}`, CALLER_TOKEN, 200],
    ];

    const answers = await Promise.all(cases.map(([path, token]) => projector.get(path, token)));

    expect(cases.map(([path, , code], i) => [path, answers[i].status, code])).toEqual(
      cases.map(([path, , code]) => [path, code, code]),
    );
    for (const [i, [, , code]] of cases.entries())
      if (code === 403) expect(answers[i].body).toMatchObject({ code: 'auth.forbidden' });
  });

  it('answers a bad query with 400 before judging the tenant: a 403 is never a hint about the input', async () => {
    const res = await projector.get('/v1/usage?tenant=', T.acmeReader);

    expect(res.status).toBe(400);
  });
});

describe('live reload of the tokens file', () => {
  it('takes a changed file in both apps: a new token works, a removed one is refused', async () => {
    // given the file gains a late token and loses the unscoped reader
    const next = [
      ...ENTRIES.filter((e) => e.name !== 'reader'),
      { name: 'late', token: T.late, roles: ['decide', 'query'] },
    ];

    // when the file is replaced
    await writeTokens(tokensFile(next));

    // then, within a deadline, both apps accept the late token and refuse the reader
    await eventually(
      () => decide(ACME, T.late, 0).then((r) => r.status),
      (s) => s === 200,
      {
        ...RELOAD,
        what: 'the decision API to accept the new token',
      },
    );
    await eventually(
      () => usage(ACME, T.late).then((r) => r.status),
      (s) => s === 200,
      {
        ...RELOAD,
        what: 'the projector to accept the new token',
      },
    );
    expect((await usage(ACME, T.reader)).status).toBe(401);
    expect(
      metricSum(await api.metrics(), 'tally_token_reloads_total', { outcome: 'applied', trigger: 'file' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('refuses a bad file on request with every error, and the running set stays', async () => {
    // given a file with two mistakes, one of them a token that would have become valid
    const bad = `${tokensFile([{ name: 'bad-admin', token: `bad-${run}-000000`, roles: ['admin', 'decide'] }])}  - { name: x, sha256: not-a-digest, roles: [query] }\n`;
    await writeTokens(bad);

    // when the admin asks for a reload
    const res = await api.call<{
      code: string;
      message: string;
      errors: { path: string; message: string }[];
    }>('POST', '/v1/tokens:reload', { token: ADMIN_TOKEN });

    // then it is refused with every error, and the tokens in force still decide
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('tokens.invalid');
    expect(res.body.message).toMatch(/^the tokens file is invalid; version [0-9a-f]{12} stays in force$/);
    expect(res.body.errors).toEqual([
      {
        path: 'tokens[0].roles',
        message:
          'admin cannot be combined with decide or query: an admin token must not also be a caller token',
      },
      {
        path: 'tokens[1].sha256',
        message: 'must be 64 lowercase hex characters: the SHA-256 of the token (tally tokens hash)',
      },
    ]);
    expect((await decide(ACME, T.late, 0)).status).toBe(200);
    expect((await decide(ACME, `bad-${run}-000000`, 0)).status).toBe(401);
    // and the projector, which saw the same file through its watch, refused it too
    await eventually(
      () => projector.metric('tally_token_reloads_total', 'outcome="rejected"'),
      (n) => n >= 1,
      { ...RELOAD, what: "the projector's watcher to refuse the bad file" },
    );
    expect((await usage(ACME, T.late)).status).toBe(200);
  });

  it('reloads on request once the file is fixed', async () => {
    await writeTokens(tokensFile(ENTRIES));

    const res = await api.call('POST', '/v1/tokens:reload', { token: ADMIN_TOKEN });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: expect.stringMatching(/^[0-9a-f]{12}$/), tokens: 6 });
    expect((await decide(ACME, T.late, 0)).status).toBe(401);
    await eventually(
      () => usage(ACME, T.reader).then((r) => r.status),
      (s) => s === 200,
      {
        ...RELOAD,
        what: 'the projector to take the fixed file',
      },
    );
  });
});

describe('boot', () => {
  it('refuses an admin token that is also a caller token in the settings', () => {
    const sut = () =>
      loadConfig({
        TALLY_API_TOKENS: `${CALLER_TOKEN},${ADMIN_TOKEN}`,
        TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
        TALLY_TOKEN_SECRET: 'boot-token-secret-0123456789',
      });

    expect(sut).toThrow(ConfigError);
    expect(sut).toThrow(
      'TALLY_ADMIN_TOKEN: must differ from every TALLY_API_TOKENS token (an admin token is never a caller token)',
    );
  });

  it('refuses a tokens file that lists the admin token as a caller', async () => {
    const path = join(dir, 'collides.yaml');
    await writeFile(path, tokensFile([{ name: 'svc', token: ADMIN_TOKEN, roles: ['decide'] }]));
    const config = loadConfig({
      REDIS_URL: inject('redisUrl'),
      TALLY_API_TOKENS: CALLER_TOKEN,
      TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
      TALLY_TOKEN_SECRET: 'boot-token-secret-0123456789',
      TALLY_TOKENS_FILE: path,
    });

    expect(() => DecisionApiModule.forRoot(config)).toThrow(TokensLoadError);
    expect(() => DecisionApiModule.forRoot(config)).toThrow(
      `invalid tokens file ${path}:\n  tokens[0].sha256: same token as TALLY_ADMIN_TOKEN: list a token once, in the file or in the environment`,
    );
  });

  describe('the built decision API', () => {
    const root = resolve(__dirname, '../..');
    // Inside the repository, so the built tree finds node_modules.
    const out = join(root, '.local', uniqueName('e2e-scoped-build'));

    beforeAll(async () => {
      await buildTree(out, ['decision-api']);
    }, 240_000);
    afterAll(async () => {
      await rm(out, { recursive: true, force: true });
    });

    /** Runs main.js with `env` and resolves with its exit code and stderr; it must exit on its own. */
    const boot = (env: Record<string, string>): Promise<{ code: number | null; stderr: string }> =>
      new Promise((done, fail) => {
        const child = spawn(process.execPath, [join(out, 'apps/decision-api/src/main.js')], {
          cwd: root,
          env: {
            PATH: process.env.PATH,
            TALLY_TOKEN_SECRET: 'boot-token-secret-0123456789',
            TALLY_WORKERS: '1',
            ...env,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += String(d)));
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          fail(new Error(`decision-api did not exit within 30 s: ${stderr}`));
        }, 30_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          done({ code, stderr });
        });
      });

    it('exits 2 when the admin token is also a caller token', async () => {
      const sut = await boot({
        TALLY_API_TOKENS: `${CALLER_TOKEN},${ADMIN_TOKEN}`,
        TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
      });

      expect(sut.code).toBe(2);
      expect(sut.stderr).toContain(
        'TALLY_ADMIN_TOKEN: must differ from every TALLY_API_TOKENS token (an admin token is never a caller token)',
      );
      expect(sut.stderr).not.toContain(ADMIN_TOKEN);
    });

    it('exits 2 when the tokens file repeats the admin token as a caller token', async () => {
      const path = join(dir, 'collides-boot.yaml');
      await writeFile(path, tokensFile([{ name: 'svc', token: ADMIN_TOKEN, roles: ['decide'] }]));

      const sut = await boot({
        TALLY_API_TOKENS: CALLER_TOKEN,
        TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
        TALLY_TOKENS_FILE: path,
      });

      expect(sut.code).toBe(2);
      expect(sut.stderr).toContain(
        `decision-api: invalid tokens file ${path}:\n  tokens[0].sha256: same token as TALLY_ADMIN_TOKEN: list a token once, in the file or in the environment`,
      );
      expect(sut.stderr).not.toContain(ADMIN_TOKEN);
    });
  });
});
