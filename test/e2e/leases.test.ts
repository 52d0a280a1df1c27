/**
 * Concurrency leases end to end: real HTTP into the real DecisionApiModule, real Redis. The release
 * and extend endpoints' answers and codes, 500 parallel acquisitions over HTTP, a policy reload under live
 * leases, and a caller process SIGKILLed while it holds leases (they come back at their expiry).
 */
import { spawn } from 'node:child_process';
import { eventually, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ADMIN_TOKEN,
  CALLER_TOKEN,
  DecisionApiHarness,
  type DecisionBody,
} from './support/decision-api.harness';

const run = uniqueName('e2e-lease');
const P = { jobs: `${run}-jobs`, reload: `${run}-reload`, crash: `${run}-crash`, brief: `${run}-brief` };
const policies = (reloadLimit: number): string => `
policies:
  - name: ${P.jobs}
    match: { route: jobs }
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: 10, lease_ttl: 1m }
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100000, period: 1h }
  - name: ${P.reload}
    match: { route: reload }
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: ${reloadLimit}, lease_ttl: 1m }
  - name: ${P.crash}
    match: { route: crash }
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: 3, lease_ttl: 3s }
  - name: ${P.brief}
    match: { route: brief }
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: 1, lease_ttl: 2s }
`;

interface ReleaseBody {
  readonly lease_id: string;
  readonly outcome: string;
  readonly expires_at: string;
  readonly released_at: string | null;
  /** Set on a refusal (the error body). */
  readonly code?: string;
}

let sut: DecisionApiHarness;
const tenant = (): string => uniqueName('acme');

beforeAll(async () => {
  sut = await DecisionApiHarness.start({
    redisUrl: inject('redisUrl'),
    policies: policies(3),
    contract: true,
    // A generous deadline: on a busy 2-core machine 500 parallel steps can outlast the default
    // 100 ms, and a timed-out step is a degraded answer, not the count this suite checks.
    env: { TALLY_BACKEND_TIMEOUT_MS: '10000' },
  });
});
afterAll(async () => {
  await sut.close();
});

const acquire = (t: string, route: string) =>
  sut.decide<DecisionBody>({ selectors: { tenant: t, route }, cost: 1 });
const release = (id: string, token?: string | null) =>
  sut.call<ReleaseBody>('POST', `/v1/leases/${id}:release`, token === undefined ? {} : { token });

describe('POST /v1/leases/{id}:release', () => {
  it('returns the units once; a second release answers already_released and changes nothing', async () => {
    const t = tenant();
    const held = await acquire(t, 'jobs');
    expect(held.status).toBe(200);
    const lease = held.body.lease;
    expect(lease).toEqual({
      id: expect.stringMatching(/^s\d+-[0-9A-HJKMNP-TV-Z]{26}$/),
      expires_at: expect.any(String),
      ttl_ms: 60_000,
    });
    expect(lease?.id.endsWith(held.body.decision_id)).toBe(true);

    const first = await release(lease?.id ?? '');
    const second = await release(lease?.id ?? '');

    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      lease_id: lease?.id,
      outcome: 'released',
      expires_at: lease?.expires_at,
      released_at: expect.any(String),
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, outcome: 'already_released' });
    expect((await sut.remaining(P.jobs, { tenant: t })).inflight).toBe(10);
  });

  it('refuses a malformed id with 400 lease.invalid_id, an unknown one with 404 lease.not_found', async () => {
    const malformed = await release('not-a-lease');
    const noVerb = await sut.call('POST', '/v1/leases/s1-01JD0000000000000000000000');
    const unknown = await release('s1-01JD0000000000000000000000');

    expect([malformed.status, malformed.body.code]).toEqual([400, 'lease.invalid_id']);
    expect([noVerb.status, noVerb.body.code]).toEqual([400, 'lease.invalid_id']);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'lease.not_found']);
  });

  it('needs a token with the decide role', async () => {
    const held = await acquire(tenant(), 'jobs');
    const id = held.body.lease?.id ?? '';

    expect((await release(id, null)).status).toBe(401);
    expect((await release(id, ADMIN_TOKEN)).body.code).toBe('auth.forbidden');
    expect((await release(id, CALLER_TOKEN)).body.outcome).toBe('released');
  });
});

interface ExtendBody {
  readonly lease_id: string;
  readonly expires_at: string;
  readonly ttl_ms: number;
  readonly max_ttl_ms: number;
  /** Set on a refusal (the error body). */
  readonly code?: string;
}

const extend = (id: string, body?: unknown, token?: string | null) =>
  sut.call<ExtendBody>('POST', `/v1/leases/${id}:extend`, {
    ...(body === undefined ? {} : { body }),
    ...(token === undefined ? {} : { token }),
  });

describe('POST /v1/leases/{id}:extend', () => {
  it('moves the expiry to now + the lease TTL (no body, or {}), never earlier, and keeps the unit held', async () => {
    const t = tenant();
    const lease = (await acquire(t, 'jobs')).body.lease;
    const id = lease?.id ?? '';

    const bare = await extend(id);
    const empty = await extend(id, {});
    const shorter = await extend(id, { ttl_ms: 1_000 });

    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({
      lease_id: id,
      expires_at: expect.any(String),
      ttl_ms: 60_000,
      max_ttl_ms: 60_000,
    });
    expect(Date.parse(bare.body.expires_at)).toBeGreaterThanOrEqual(Date.parse(lease?.expires_at ?? ''));
    expect(Date.parse(empty.body.expires_at)).toBeGreaterThanOrEqual(Date.parse(bare.body.expires_at));
    expect([shorter.status, shorter.body.expires_at]).toEqual([200, empty.body.expires_at]);
    expect(shorter.body.ttl_ms).toBeGreaterThan(1_000);
    expect((await sut.remaining(P.jobs, { tenant: t })).inflight).toBe(9);
    // a release after the extension frees the unit and says so with the extended expiry
    const released = await release(id);
    expect(released.body).toMatchObject({ outcome: 'released', expires_at: shorter.body.expires_at });
    expect((await sut.remaining(P.jobs, { tenant: t })).inflight).toBe(10);
  });

  it('refuses a released lease and an expired one with 409, never giving the unit back to them', async () => {
    const t = tenant();
    const released = (await acquire(t, 'brief')).body.lease?.id ?? '';
    await release(released);
    const expired = (await acquire(t, 'brief')).body.lease;
    // wait for the expiry on the clock (never concluded from a sleep): then one ms past it is enough
    await eventually(
      () => Date.now(),
      (now) => now > Date.parse(expired?.expires_at ?? '') + 20,
      { timeoutMs: 10_000, intervalMs: 20 },
    );

    const afterRelease = await extend(released);
    const afterExpiry = await extend(expired?.id ?? '');

    expect([afterRelease.status, afterRelease.body.code]).toEqual([409, 'lease.released']);
    expect([afterExpiry.status, afterExpiry.body.code]).toEqual([409, 'lease.expired']);
    expect((await acquire(t, 'brief')).status).toBe(200);
    expect((await acquire(t, 'brief')).status).toBe(429);
  });

  it('refuses bad input with a stable code: id, TTL above the lease TTL, a malformed body; auth as release', async () => {
    const id = (await acquire(tenant(), 'jobs')).body.lease?.id ?? '';

    const tooLong = await extend(id, { ttl_ms: 60_001 });
    expect([tooLong.status, tooLong.body.code]).toEqual([400, 'lease.ttl_too_long']);
    for (const body of [{ ttl_ms: 0 }, { ttl_ms: 1.5 }, { ttl_ms: '5000' }, { ttl: 5_000 }, [1]])
      expect((await extend(id, body)).body.code).toBe('request.invalid');
    expect((await extend('not-a-lease')).body.code).toBe('lease.invalid_id');
    expect((await extend('s1-01JD0000000000000000000000')).status).toBe(404);
    expect((await extend(id, undefined, null)).status).toBe(401);
    expect((await extend(id, undefined, ADMIN_TOKEN)).body.code).toBe('auth.forbidden');
    expect((await extend(id, { ttl_ms: 60_000 }, CALLER_TOKEN)).status).toBe(200);
  });
});

describe('concurrency windows over HTTP', () => {
  it('grants exactly 10 of 500 parallel acquisitions at a limit of 10', async () => {
    const t = tenant();

    const answers = await Promise.all(Array.from({ length: 500 }, () => acquire(t, 'jobs')));

    const granted = answers.filter((a) => a.status === 200);
    expect(granted).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429 && a.body.code === 'quota.exceeded')).toHaveLength(490);
    expect(new Set(granted.map((a) => a.body.lease?.id)).size).toBe(10);
    // the rate window counted the 10 acquisitions only: denials took nothing
    expect((await sut.remaining(P.jobs, { tenant: t })).hourly).toBe(100_000 - 10);
  });

  it('keeps live leases across a policy reload: they count against the new limit until released', async () => {
    const t = tenant();
    const held = await Promise.all([acquire(t, 'reload'), acquire(t, 'reload'), acquire(t, 'reload')]);
    expect(held.map((h) => h.status)).toEqual([200, 200, 200]);

    await sut.writePolicies(policies(1));
    expect((await sut.reload()).status).toBe(200);

    const over = await acquire(t, 'reload');
    expect(over.status).toBe(429);
    expect(over.body.policies[0].windows[0]).toMatchObject({ limit: 1, remaining: 0 });
    for (const h of held) expect((await release(h.body.lease?.id ?? '')).body.outcome).toBe('released');
    expect((await acquire(t, 'reload')).status).toBe(200);
    expect((await acquire(t, 'reload')).status).toBe(429);
  });

  it("returns a SIGKILLed caller's leases at their expiry, and only then", async () => {
    // given: a caller process that takes all 3 units and is killed while holding them
    const t = tenant();
    const child = spawn(process.execPath, ['-e', CALLER_SCRIPT], {
      env: { BASE: sut.baseUrl, TOKEN: CALLER_TOKEN, TENANT: t },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const leases: { id: string; expires_at: string }[] = [];
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (;;) {
        const nl = out.indexOf('\n');
        if (nl < 0) break;
        leases.push(JSON.parse(out.slice(0, nl)) as { id: string; expires_at: string });
        out = out.slice(nl + 1);
      }
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_, s) => resolve(s)));
    await eventually(
      () => leases.length,
      (n) => n === 3,
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // then: while the leases live, nothing is granted; once they expired, exactly 3 units are back
    const expiresAt = Math.max(...leases.map((l) => Date.parse(l.expires_at)));
    const earliest = Math.min(...leases.map((l) => Date.parse(l.expires_at)));
    const before = await acquire(t, 'crash');
    if (Date.now() < earliest - 100) expect(before.status).toBe(429);
    const back = await eventually(
      () => acquire(t, 'crash'),
      (a) => a.status === 200,
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(back.status).toBe(200);
    expect(Date.now()).toBeGreaterThanOrEqual(earliest - 50); // never before the first expiry
    await eventually(
      () => Date.now(),
      (now) => now > expiresAt + 50,
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const rest = [await acquire(t, 'crash'), await acquire(t, 'crash'), await acquire(t, 'crash')];
    expect(rest.map((a) => a.status)).toEqual([200, 200, 429]);
  });
});

/** The killed caller: takes 3 leases, prints each, then waits to be killed (never releases). */
const CALLER_SCRIPT = `
(async () => {
  for (let i = 0; i < 3; i++) {
    const res = await fetch(process.env.BASE + '/v1/decisions', {
      method: 'POST',
      headers: { authorization: 'Bearer ' + process.env.TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ selectors: { tenant: process.env.TENANT, route: 'crash' }, cost: 1 }),
    });
    const body = await res.json();
    if (res.status !== 200) { console.error('caller: ' + res.status + ' ' + JSON.stringify(body)); process.exit(1); }
    process.stdout.write(JSON.stringify(body.lease) + '\\n');
  }
  setInterval(() => {}, 1000);
})();
`;
