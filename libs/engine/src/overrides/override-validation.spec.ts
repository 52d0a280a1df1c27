import { testPolicy } from '@tally/testing';
import type { PolicySet } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { checkChange, checkTarget, parseRfc3339 } from './override-validation';

const NOW = Date.UTC(2026, 11, 1, 12);
const byTenant = testPolicy('by-tenant', {
  key: ['tenant', 'client'],
  windows: [
    { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 10, periodMs: 1000 },
    { name: 'hourly', role: 'sustained', algorithm: 'sliding_window', limit: 100, periodMs: 3_600_000 },
  ],
});
const byPrincipal = testPolicy('by-principal', { key: ['principal'] });
const perTenant = testPolicy('per-tenant', { key: [] });
const byToken = testPolicy('by-token', { key: ['token'] });
const SET: PolicySet = { version: 'v', loadedAt: 0, policies: [byTenant, byPrincipal, perTenant, byToken] };

describe(checkTarget.name, () => {
  it.each([
    ['by-tenant', 'acme:mobile', undefined, { key: 'acme:mobile', tenant: 'acme' }],
    ['by-tenant', 'a%3Ab:c%25d', 'a:b', { key: 'a%3Ab:c%25d', tenant: 'a:b' }],
    ['by-principal', 'svc-42', 'acme', { key: 'svc-42', tenant: 'acme' }],
    ['per-tenant', '-', 'acme', { key: '', tenant: 'acme' }],
    ['by-token', 't_abcdefghijklmnopqrstuv', 'acme', { key: 't_abcdefghijklmnopqrstuv', tenant: 'acme' }],
  ])('%s %j (tenant %j) is the target the engine keys', (policy, key, tenant, expected) => {
    const sut = checkTarget(SET, policy, key, tenant);
    expect(sut).toMatchObject({ ok: true, value: { policy, ...expected } });
  });

  it.each([
    ['nope', 'x', undefined, ['policy']],
    ['by-tenant', 'acme', undefined, ['key']],
    ['by-tenant', 'acme:mobile:x', undefined, ['key']],
    ['by-tenant', 'a:b%3a', undefined, ['key']],
    ['by-tenant', 'a%41:b', undefined, ['key']],
    ['by-tenant', ' acme:b', undefined, ['key']],
    ['by-tenant', 'acme:mobile', 'other', ['tenant']],
    ['by-principal', 'svc-42', undefined, ['tenant']],
    ['per-tenant', 'acme', 'acme', ['key']],
    ['by-token', 'raw-token-value', 'acme', ['key']],
  ])('refuses %s %j (tenant %j), naming %j', (policy, key, tenant, paths) => {
    const sut = checkTarget(SET, policy, key, tenant);
    expect(sut.ok ? [] : sut.errors.map((e) => e.path)).toEqual(paths);
  });
});

describe(checkChange.name, () => {
  it('takes limits of some windows, an expiry in the future and a trimmed reason', () => {
    const sut = checkChange(
      byTenant,
      { limits: { hourly: 0 }, expires_at: '2026-12-05T00:00:00+01:00', reason: ' abuse ' },
      'ops',
      NOW,
    );
    expect(sut).toEqual({
      ok: true,
      value: { limits: { hourly: 0 }, expiresAtMs: Date.UTC(2026, 11, 4, 23), reason: 'abuse', setBy: 'ops' },
    });
  });

  it('names every bad field at once', () => {
    const sut = checkChange(
      byTenant,
      {
        limits: { burst: 1.5, nope: 1, hourly: 2 ** 50 },
        expires_at: '2026-12-01T11:00:00Z',
        reason: 'a\nb',
      },
      'ops',
      NOW,
    );
    expect(sut.ok ? [] : sut.errors.map((e) => e.path)).toEqual([
      'limits.burst',
      'limits.nope',
      'limits.hourly',
      'expires_at',
      'reason',
    ]);
  });

  it('refuses an empty limits object', () => {
    const sut = checkChange(byTenant, { limits: {}, reason: 'r' }, 'ops', NOW);
    expect(sut.ok ? [] : sut.errors.map((e) => e.path)).toEqual(['limits']);
  });
});

describe(parseRfc3339.name, () => {
  it.each([
    ['2026-12-01T12:00:00Z', Date.UTC(2026, 11, 1, 12)],
    ['2026-12-01t12:00:00.5z', Date.UTC(2026, 11, 1, 12) + 500],
    ['2026-12-01T12:00:00', null],
    ['2026-12-01', null],
    ['tomorrow', null],
  ])('%j → %j', (text, ms) => {
    expect(parseRfc3339(text)).toBe(ms);
  });
});
