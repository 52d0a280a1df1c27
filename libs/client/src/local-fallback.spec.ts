import { describe, expect, it } from 'vitest';
import type { TallyLocalFallbackOptions, TallyLocalWindow } from './client.types';
import { LocalFallback, LOCAL_POLICY } from './local-fallback';
import { TallyClient } from './tally.client';
import { UNFIT_RETRY_AFTER_MS } from '@tally/window-math';

const MINUTE = 60_000;
/** Minute-aligned, so fixed windows start at T. */
const T = 1_700_000_040_000;
const failure = { kind: 'connection', message: 'connect ECONNREFUSED' } as const;
const perMinute: TallyLocalWindow = {
  name: 'minute',
  role: 'sustained',
  algorithm: 'fixed_window',
  limit: 100,
  periodMs: MINUTE,
};

function setup(over: Partial<TallyLocalFallbackOptions> = {}) {
  let now = T;
  const sut = new LocalFallback({ windows: [perMinute], clock: () => now, ...over });
  return { sut, at: (ms: number) => (now = ms) };
}
const ask = (tenant = 'acme', cost?: number) => ({
  selectors: { tenant, route: 'r' },
  ...(cost === undefined ? {} : { cost }),
});

describe(LocalFallback.name, () => {
  it('allows exactly the limit per window in one process (share 1), then denies by quota, degraded', () => {
    const { sut, at } = setup();

    const decisions = Array.from({ length: 150 }, () => sut.decide(ask(), failure));

    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(decisions[99]).toMatchObject({
      status: 200,
      degraded: true,
      degraded_cause: 'client_unreachable',
      decision_id: null,
      policies: [{ name: LOCAL_POLICY, windows: [{ name: 'minute', limit: 100, remaining: 0 }] }],
      rateLimitHeaders: { 'ratelimit-name': LOCAL_POLICY, 'ratelimit-remaining': '0' },
    });
    expect(decisions[100]).toMatchObject({
      status: 429,
      allowed: false,
      reason: 'sustained_quota_exhausted',
      code: 'quota.exceeded',
      retry_after_ms: MINUTE,
      degraded: true,
      degraded_cause: 'client_unreachable',
      failure,
      rateLimit: { retryAfterSeconds: 60, binding: { policy: LOCAL_POLICY, window: 'minute', remaining: 0 } },
      rateLimitHeaders: { 'retry-after': '60', 'ratelimit-policy': `"${LOCAL_POLICY}.minute";q=100` },
    });
    // the next window starts empty
    at(T + MINUTE);
    expect(
      Array.from({ length: 150 }, () => sut.decide(ask(), failure)).filter((d) => d.allowed),
    ).toHaveLength(100);
  });

  it('allows ⌊limit / share⌋, a cost above it never fits (a short retry), and the burst role names its reason', () => {
    const { sut } = setup({ share: 3, windows: [{ ...perMinute, role: 'burst' }] });

    expect(Array.from({ length: 50 }, () => sut.decide(ask(), failure).allowed).filter(Boolean)).toHaveLength(
      33,
    );
    expect(sut.decide(ask('other', 34), failure)).toMatchObject({
      status: 429,
      reason: 'burst_quota_exhausted',
      retry_after_ms: UNFIT_RETRY_AFTER_MS,
    });
  });

  it('keys by the selectors whatever their order, unless a key function says otherwise', () => {
    const { sut } = setup({ windows: [{ ...perMinute, limit: 1 }] });
    sut.decide({ selectors: { tenant: 'a', route: 'r' } }, failure);

    expect(sut.decide({ selectors: { route: 'r', tenant: 'a' } }, failure).status).toBe(429);
    const byTenant = setup({ windows: [{ ...perMinute, limit: 1 }], key: (r) => r.selectors.tenant }).sut;
    byTenant.decide({ selectors: { tenant: 'a', route: 'x' } }, failure);
    expect(byTenant.decide({ selectors: { tenant: 'a', route: 'y' } }, failure).status).toBe(429);
  });

  it('holds at most maxKeys under 100,000 distinct keys; beyond, closed refuses (503) and open allows uncounted', () => {
    const closed = setup({ maxKeys: 1_000 }).sut;
    const open = setup({ maxKeys: 1_000, overflow: 'open' }).sut;
    const statuses = { closed: new Map<number, number>(), open: new Map<number, number>() };

    for (let i = 0; i < 100_000; i++) {
      const c = closed.decide(ask(`t${i}`), failure).status;
      const o = open.decide(ask(`t${i}`), failure).status;
      statuses.closed.set(c, (statuses.closed.get(c) ?? 0) + 1);
      statuses.open.set(o, (statuses.open.get(o) ?? 0) + 1);
    }

    expect(closed.size).toBe(1_000);
    expect(open.size).toBe(1_000);
    expect(Object.fromEntries(statuses.closed)).toEqual({ 200: 1_000, 503: 99_000 });
    expect(Object.fromEntries(statuses.open)).toEqual({ 200: 100_000 });
    expect(closed.decide(ask('new'), failure)).toMatchObject({
      status: 503,
      reason: 'backend_unavailable',
      message: 'local fallback: the in-memory key bound is reached',
    });
    expect(open.decide(ask('new'), failure)).toMatchObject({ status: 200, degraded: true, policies: [] });
  });

  it('takes the place of the least recently used key once its windows no longer matter', () => {
    const { sut, at } = setup({ maxKeys: 2, windows: [{ ...perMinute, periodMs: 1_000 }] });
    sut.decide(ask('a'), failure);
    sut.decide(ask('b'), failure);
    expect(sut.decide(ask('c'), failure).status).toBe(503);

    at(T + 2_000);
    expect(sut.decide(ask('c'), failure).status).toBe(200);
    expect(sut.size).toBe(2);
  });

  it('refuses options that cannot limit', () => {
    expect(() => new LocalFallback({ windows: [] })).toThrow('localFallback.windows must not be empty');
    expect(() => new LocalFallback({ windows: [perMinute], share: 0 })).toThrow(
      'localFallback.share must be an integer ≥ 1',
    );
    expect(() => new LocalFallback({ windows: [{ ...perMinute, limit: 0 }] })).toThrow(
      'localFallback.windows[0]: limit and periodMs must be integers ≥ 1',
    );
  });

  it('is required by failMode local, on the client or per call, before anything is sent', async () => {
    const options = { baseUrl: 'http://127.0.0.1:1', token: 'caller-token' };
    expect(() => new TallyClient({ ...options, failMode: 'local' })).toThrow(
      'failMode "local" needs the localFallback option (its windows)',
    );
    const sut = new TallyClient(options);
    await expect(sut.decide(ask(), { failMode: 'local' })).rejects.toThrow('needs the localFallback option');
    await expect(sut.decideBatch([ask()], { failMode: 'local' })).rejects.toThrow(
      'needs the localFallback option',
    );
    sut.close();
  });
});
