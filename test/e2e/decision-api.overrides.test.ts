/**
 * Runtime overrides over HTTP (real decision API, real Redis): the admin API sets, reads, lists and
 * removes them, and the next decision follows — raised, blocked, back to the policy — naming the
 * override in force. Every answer is checked against the served OpenAPI document.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OverrideItem, OverrideList } from '@tally/api-contract';
import { tokenDigestHex } from '@tally/auth';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TallyClient, TallyRequestError } from '@tally/client';
import { uniqueName } from '@tally/testing';
import { OverridesController } from '../../apps/decision-api/src/overrides.controller';
import { tally } from '../integration/cli.support';
import {
  ADMIN_TOKEN,
  CALLER_TOKEN,
  DecisionApiHarness,
  type DecisionBody,
} from './support/decision-api.harness';

const run = uniqueName('e2e-ov');
const P = { tenant: `${run}-tenant`, client: `${run}-client` };
const POLICIES = `
policies:
  - name: ${P.tenant}
    match: { route: t }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 2, period: 1h }
      - { name: daily, role: sustained, algorithm: fixed_window, limit: 100, period: 1d }
  - name: ${P.client}
    match: { route: c }
    key: [tenant, client]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 5, period: 1m }
`;

let sut: DecisionApiHarness;
const admin = { token: ADMIN_TOKEN };
const path = (policy: string, key: string) => `/v1/overrides/${policy}/${encodeURIComponent(key)}`;

beforeAll(async () => {
  sut = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES, contract: true });
});
afterAll(async () => {
  await sut.close();
});

describe(OverridesController.name, () => {
  it('raises a tenant, then blocks it, then removes the override: each decision follows at once', async () => {
    const tenant = uniqueName('acme');
    const decide = () => sut.decide<DecisionBody>({ selectors: { tenant, route: 't' } });

    const created = await sut.call<OverrideItem>('PUT', path(P.tenant, tenant), {
      ...admin,
      body: { limits: { hourly: 3 }, reason: 'launch week' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      policy: P.tenant,
      key: tenant,
      tenant,
      limits: { hourly: 3 },
      expires_at: null,
      reason: 'launch week',
      set_by: 'TALLY_ADMIN_TOKEN',
    });
    const answers = [await decide(), await decide(), await decide(), await decide()];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0].body.policies[0]).toMatchObject({
      override: { version: created.body.version },
      windows: [
        { name: 'hourly', limit: 3 },
        { name: 'daily', limit: 100 },
      ],
    });
    expect(answers[0].headers.get('ratelimit-limit')).toBe('3');

    const blocked = await sut.call<OverrideItem>('PUT', path(P.tenant, tenant), {
      ...admin,
      body: {
        limits: { daily: 0 },
        reason: 'abuse',
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    expect(blocked.status).toBe(200);
    expect(blocked.body.version).toBeGreaterThan(created.body.version);
    const refused = await decide();
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ allowed: false, reason: 'blocked', code: 'quota.blocked' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);

    const read = await sut.call<OverrideItem>('GET', path(P.tenant, tenant), admin);
    expect(read).toMatchObject({
      status: 200,
      body: { version: blocked.body.version, limits: { daily: 0 } },
    });

    expect((await sut.call('DELETE', path(P.tenant, tenant), admin)).status).toBe(204);
    expect(await sut.call('GET', path(P.tenant, tenant), admin)).toMatchObject({
      status: 404,
      body: { code: 'override.not_found' },
    });
    expect((await sut.call('DELETE', path(P.tenant, tenant), admin)).status).toBe(404);
    const back = await decide();
    expect(back.status).toBe(429); // the policy's own limit of 2 is spent (3 were allowed meanwhile)
    expect(back.body.policies[0]).not.toHaveProperty('override');
  });

  it('addresses composite, percent-encoded keys and lists them by policy and tenant in pages', async () => {
    const tenant = `${uniqueName('a')}:b`;
    const keys = ['web', 'mobile', 'cli'].map((client) => `${tenant.replace(':', '%3A')}:${client}`);
    for (const key of keys) {
      const put = await sut.call('PUT', path(P.client, key), {
        ...admin,
        body: { limits: { burst: 9 }, reason: 'r' },
      });
      expect(put.status).toBe(201);
    }
    const decided = await sut.decide<DecisionBody>({ selectors: { tenant, client: 'mobile', route: 'c' } });
    expect(decided.body.policies[0].windows[0].limit).toBe(9);

    const seen: OverrideItem[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: URLSearchParams = new URLSearchParams({
        policy: P.client,
        tenant,
        limit: '2',
        ...(cursor && { cursor }),
      });
      const listed = await sut.call<OverrideList>('GET', `/v1/overrides?${query.toString()}`, admin);
      expect(listed.status).toBe(200);
      seen.push(...listed.body.items);
      cursor = listed.body.next_cursor;
      if (cursor === null) break;
    }
    expect(seen.map((i) => i.key).sort()).toEqual([...keys].sort());
    expect(seen.every((i) => i.tenant === tenant)).toBe(true);
  });

  it('refuses what does not fit the policy with 400 naming the field, and callers without the scope with 403', async () => {
    const tenant = uniqueName('acme');
    const bad = await sut.call<{ code: string; errors: { path: string }[] }>('PUT', path(P.client, tenant), {
      ...admin,
      body: { limits: { burst: -1, nope: 2 }, reason: 'r', expires_at: 'soon' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('request.invalid');
    expect(bad.body.errors.map((e) => e.path)).toEqual(['key', 'limits.burst', 'limits.nope', 'expires_at']);
    const unknown = await sut.call<{ errors: { path: string }[] }>(
      'GET',
      path('no-such-policy', tenant),
      admin,
    );
    expect(unknown).toMatchObject({ status: 400, body: { errors: [{ path: 'policy' }] } });
    const extra = await sut.call('PUT', path(P.tenant, tenant), {
      ...admin,
      body: { limits: { hourly: 1 }, reason: 'r', who: 'me' },
    });
    expect(extra.status).toBe(400);
    // the caller token decides and queries, and may not read or change overrides
    expect((await sut.call('GET', '/v1/overrides')).status).toBe(403);
    const put = await sut.call('PUT', path(P.tenant, tenant), {
      body: { limits: { hourly: 1 }, reason: 'r' },
    });
    expect(put.status).toBe(403);
  });

  it('the SDK lists, sets, reads and removes overrides (TallyClient.overrides)', async () => {
    const sdk = new TallyClient({ baseUrl: sut.baseUrl, token: ADMIN_TOKEN });
    try {
      const tenant = uniqueName('sdk');
      const set = await sdk.overrides.set(P.tenant, tenant, { limits: { hourly: 7 }, reason: 'sdk' });
      expect(set).toMatchObject({
        policy: P.tenant,
        key: tenant,
        limits: { hourly: 7 },
        set_by: 'TALLY_ADMIN_TOKEN',
      });
      expect(await sdk.overrides.get(P.tenant, tenant)).toEqual(set);
      const page = await sdk.overrides.list({ policy: P.tenant, tenant, limit: 10 });
      expect(page).toEqual({ items: [set], next_cursor: null });
      await expect(
        sdk.overrides.set(P.tenant, tenant, { limits: { nope: 1 }, reason: 'r' }),
      ).rejects.toMatchObject({
        status: 400,
        code: 'request.invalid',
        errors: [{ path: 'limits.nope' }],
      });
      expect(await sdk.overrides.remove(P.tenant, tenant)).toBe(true);
      expect(await sdk.overrides.remove(P.tenant, tenant)).toBe(false);
      expect(await sdk.overrides.get(P.tenant, tenant)).toBeNull();
      const caller = new TallyClient({ baseUrl: sut.baseUrl, token: CALLER_TOKEN });
      await expect(caller.overrides.list()).rejects.toBeInstanceOf(TallyRequestError);
      caller.close();
    } finally {
      sdk.close();
    }
  });

  it('tally overrides set|get|list|rm drive the same API (--json), and a refusal names the field (exit 2)', async () => {
    const env = { TALLY_ADMIN_TOKEN: ADMIN_TOKEN };
    const tenant = uniqueName('cli');
    const url = ['--url', sut.baseUrl];
    const set = await tally(
      [
        'overrides',
        'set',
        P.tenant,
        tenant,
        '--limits',
        'hourly=0',
        '--reason',
        'abuse',
        '--expires',
        new Date(Date.now() + 3_600_000).toISOString(),
        '--json',
        ...url,
      ],
      env,
    );
    expect(set).toMatchObject({ code: 0 });
    expect(JSON.parse(set.stdout)).toMatchObject({
      policy: P.tenant,
      key: tenant,
      limits: { hourly: 0 },
      reason: 'abuse',
    });
    expect((await sut.decide<DecisionBody>({ selectors: { tenant, route: 't' } })).body.reason).toBe(
      'blocked',
    );

    const got = await tally(['overrides', 'get', P.tenant, tenant, '--json', ...url], env);
    expect(JSON.parse(got.stdout)).toMatchObject({
      version: (JSON.parse(set.stdout) as OverrideItem).version,
    });
    const listed = await tally(['overrides', 'list', '--policy', P.tenant, '--tenant', tenant, ...url], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('hourly=0');
    const bad = await tally(
      ['overrides', 'set', P.tenant, tenant, '--limits', 'weekly=3', '--reason', 'r', ...url],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('limits.weekly');
    expect((await tally(['overrides', 'rm', P.tenant, tenant, ...url], env)).code).toBe(0);
    expect((await tally(['overrides', 'rm', P.tenant, tenant, ...url], env)).code).toBe(1);
    expect((await tally(['overrides', 'list', ...url], {})).code).toBe(2);
  });
});

describe('overrides scopes (tokens file)', () => {
  const acme = uniqueName('acme');
  const globex = uniqueName('globex');
  const T = { desk: `desk-token-${run}`, reader: `reader-token-${run}` };
  let scoped: DecisionApiHarness;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-ov-tokens-'));
    const file = join(dir, 'tokens.yaml');
    await writeFile(
      file,
      [
        'tokens:',
        `  - { name: acme-desk, sha256: ${tokenDigestHex(T.desk)}, roles: [overrides:write], tenants: [${acme}] }`,
        `  - { name: reader, sha256: ${tokenDigestHex(T.reader)}, roles: [overrides:read] }`,
        '',
      ].join('\n'),
    );
    scoped = await DecisionApiHarness.start({
      redisUrl: inject('redisUrl'),
      policies: POLICIES,
      env: { TALLY_TOKENS_FILE: file },
    });
  });
  afterAll(async () => {
    await scoped.close();
  });

  it('overrides:write changes only its tenants, records its name, and reads them; overrides:read only reads', async () => {
    const body = { limits: { hourly: 9 }, reason: 'desk' };
    const set = await scoped.call<OverrideItem>('PUT', path(P.tenant, acme), { token: T.desk, body });
    expect(set).toMatchObject({ status: 201, body: { set_by: 'acme-desk' } });
    expect((await scoped.call('PUT', path(P.tenant, globex), { token: T.desk, body })).status).toBe(403);
    expect((await scoped.call('GET', path(P.tenant, acme), { token: T.desk })).status).toBe(200);
    expect((await scoped.call('GET', '/v1/overrides', { token: T.desk })).status).toBe(403);
    expect((await scoped.call('GET', `/v1/overrides?tenant=${acme}`, { token: T.desk })).status).toBe(200);
    // the reader reads every tenant, changes none; a decide-only token reads nothing
    expect((await scoped.call('GET', path(P.tenant, acme), { token: T.reader })).status).toBe(200);
    expect((await scoped.call('DELETE', path(P.tenant, acme), { token: T.reader })).status).toBe(403);
    expect((await scoped.call('GET', path(P.tenant, acme), { token: CALLER_TOKEN })).status).toBe(403);
    expect((await scoped.call('DELETE', path(P.tenant, acme), { token: T.desk })).status).toBe(204);
  });
});
