import { describe, expect, it } from 'vitest';
import { keyOf, selectPolicies } from './matcher';
import type { MatchSpec, Policy, PolicySet } from './policy.types';
import type { NormalizedAttributes, NormalizedSelectors } from './selectors';
import { testPolicy } from '@tally/testing';

function policy(name: string, fields: Partial<Omit<Policy, 'name'>> = {}): Policy {
  return testPolicy(name, {
    key: ['tenant'],
    windows: [{ name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 10, periodMs: 60_000 }],
    onBackendFailure: 'fail_closed',
    ...fields,
  });
}
const setOf = (...policies: Policy[]): PolicySet => ({ version: 'v', policies, loadedAt: 0 });
const names = (policies: Policy[]) => policies.map((p) => p.name);
const match = (spec: Record<string, string[]>): MatchSpec => spec;

describe(selectPolicies.name, () => {
  const request = {
    selectors: { tenant: 'acme', principal: 'svc-42', route: 'evaluate' },
    attributes: { plan: 'premium' },
  };

  it.each<[string, Policy, boolean]>([
    ['an empty match selects everything', policy('p'), true],
    ['a selector value in the list', policy('p', { match: match({ route: ['batch', 'evaluate'] }) }), true],
    ['a selector value not in the list', policy('p', { match: match({ route: ['batch'] }) }), false],
    ['an attribute value in the list', policy('p', { match: match({ plan: ['premium'] }) }), true],
    [
      'every entry matches (AND)',
      policy('p', { match: match({ route: ['evaluate'], plan: ['premium'] }) }),
      true,
    ],
    ['one entry of two fails', policy('p', { match: match({ route: ['evaluate'], plan: ['free'] }) }), false],
    ['a name the request lacks', policy('p', { match: match({ client: ['cli'] }) }), false],
    [
      'unless: every entry matches → exempt',
      policy('p', { unless: match({ plan: ['premium'], route: ['evaluate'] }) }),
      false,
    ],
    [
      'unless: one entry of two fails → applies',
      policy('p', { unless: match({ plan: ['premium'], route: ['x'] }) }),
      true,
    ],
    [
      'unless: a name the request lacks → applies',
      policy('p', { unless: match({ principal_class: ['self'] }) }),
      true,
    ],
    ['disabled', policy('p', { enabled: false }), false],
    ['shadow applies like enforce', policy('p', { mode: 'shadow' }), true],
  ])('%s', (_case, p, applies) => {
    const sut = selectPolicies(setOf(p), request.selectors, request.attributes);

    expect(names(sut)).toEqual(applies ? ['p'] : []);
  });

  it('applies every matching policy, in file order', () => {
    const set = setOf(
      policy('a'),
      policy('b', { match: match({ route: ['other'] }) }),
      policy('c'),
      policy('d'),
    );

    expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual(['a', 'c', 'd']);
  });

  describe('groups', () => {
    const premium = match({ plan: ['premium'] });

    it('lets the first matching policy of a group claim the request', () => {
      const set = setOf(
        policy('premium', { group: 'tier', match: premium }),
        policy('default', { group: 'tier' }),
      );

      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual(['premium']);
      expect(names(selectPolicies(set, request.selectors, { plan: 'free' }))).toEqual(['default']);
    });

    it('falls through a disabled policy to the next one, so traffic stays counted', () => {
      // given the claiming policy switched off
      const set = setOf(
        policy('premium', { group: 'tier', match: premium, enabled: false }),
        policy('default', { group: 'tier' }),
      );

      // when a premium request arrives, then the default still counts it
      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual(['default']);
    });

    it('falls through a policy whose unless exempts the request', () => {
      const set = setOf(
        policy('premium', { group: 'tier', match: premium, unless: match({ route: ['evaluate'] }) }),
        policy('default', { group: 'tier' }),
      );

      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual(['default']);
    });

    it('never lets a shadow policy claim: the enforced one behind it keeps applying', () => {
      // given a stricter rule trialled in shadow ahead of the enforced one
      const set = setOf(
        policy('premium-v2', { group: 'tier', match: premium, mode: 'shadow' }),
        policy('premium', { group: 'tier', match: premium }),
        policy('default', { group: 'tier' }),
      );

      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual([
        'premium-v2',
        'premium',
      ]);
    });

    it('does not evaluate a shadow policy behind a claiming one', () => {
      const set = setOf(
        policy('premium', { group: 'tier' }),
        policy('trial', { group: 'tier', mode: 'shadow' }),
      );

      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual(['premium']);
    });

    it('keeps groups independent of each other and of ungrouped policies', () => {
      const set = setOf(
        policy('t1', { group: 'tier' }),
        policy('global'),
        policy('t2', { group: 'tier' }),
        policy('r1', { group: 'route' }),
        policy('r2', { group: 'route' }),
      );

      expect(names(selectPolicies(set, request.selectors, request.attributes))).toEqual([
        't1',
        'global',
        'r1',
      ]);
    });

    it('applies nothing from a group where nothing matches', () => {
      const set = setOf(
        policy('a', { group: 'g', match: match({ plan: ['x'] }) }),
        policy('b', { group: 'g', enabled: false }),
      );

      expect(selectPolicies(set, request.selectors, request.attributes)).toEqual([]);
    });
  });

  describe('whole (Envoy descriptors): match names ∪ key dims, domain aside, equal the request names', () => {
    const descriptor: { selectors: NormalizedSelectors; attributes: NormalizedAttributes } = {
      selectors: { tenant: 'acme', route: 'evaluate' },
      attributes: { domain: 'edge' },
    };
    const routeByTenant = (fields: Partial<Omit<Policy, 'name'>> = {}): Policy =>
      policy('p', { match: match({ domain: ['edge'], route: ['evaluate'] }), key: ['tenant'], ...fields });

    it.each<[string, Policy, typeof descriptor, boolean]>([
      ['exactly the same names', routeByTenant(), descriptor, true],
      [
        'a descriptor with an entry more is not the shorter rule',
        routeByTenant(),
        { ...descriptor, attributes: { domain: 'edge', generic_key: 'x' } },
        false,
      ],
      [
        'a descriptor with an entry less is not the longer rule (no identity_missing)',
        routeByTenant({ key: ['tenant', 'principal'] }),
        descriptor,
        false,
      ],
      [
        'a name in both match and key counts once',
        routeByTenant({ match: match({ tenant: ['acme'] }), key: ['tenant', 'route'] }),
        descriptor,
        true,
      ],
      [
        'domain is matched as a value, never part of the shape',
        routeByTenant({ match: match({ route: ['evaluate'] }) }),
        descriptor,
        true,
      ],
      ['values still decide', routeByTenant({ match: match({ route: ['batch'] }) }), descriptor, false],
      [
        'as many names, but another one, is not the rule',
        routeByTenant({ key: ['principal'] }),
        { ...descriptor, selectors: { tenant: 'acme', route: 'evaluate' } },
        false,
      ],
      ['a key dim named twice counts once', routeByTenant({ key: ['tenant', 'tenant'] }), descriptor, true],
    ])('%s', (_case, p, request, expected) => {
      const sut = selectPolicies(setOf(p), request.selectors, request.attributes, true);

      expect(names(sut)).toEqual(expected ? ['p'] : []);
    });

    it('leaves the subset rule of HTTP unchanged when off', () => {
      const extra = { ...descriptor.attributes, generic_key: 'x' };

      expect(names(selectPolicies(setOf(routeByTenant()), descriptor.selectors, extra))).toEqual(['p']);
      expect(names(selectPolicies(setOf(routeByTenant()), descriptor.selectors, extra, true))).toEqual([]);
    });

    it('lets a group fall through to the policy that fits the whole descriptor', () => {
      const shorter = policy('short', { match: match({ route: ['evaluate'] }), group: 'g' });
      const longer = policy('long', { match: match({ route: ['evaluate'], plan: ['gold'] }), group: 'g' });
      const request = { selectors: descriptor.selectors, attributes: { domain: 'edge', plan: 'gold' } };

      expect(
        names(selectPolicies(setOf(shorter, longer), request.selectors, request.attributes, true)),
      ).toEqual(['long']);
    });
  });
});

describe(keyOf.name, () => {
  it('joins the key dims in the policy order', () => {
    const sut = keyOf(policy('p', { key: ['principal', 'tenant'] }), { tenant: 'acme', principal: 'svc-42' });

    expect(sut).toEqual({ ok: true, value: 'svc-42:acme' });
  });

  it('percent-encodes %, :, { and } so the join is unambiguous and cannot open a hash tag', () => {
    const p = policy('p', { key: ['tenant', 'principal'] });

    expect(keyOf(p, { tenant: 'a:b', principal: 'c' })).toEqual({ ok: true, value: 'a%3Ab:c' });
    expect(keyOf(p, { tenant: 'a', principal: 'b:c' })).toEqual({ ok: true, value: 'a:b%3Ac' });
    expect(keyOf(p, { tenant: '100%', principal: '{s1}' })).toEqual({ ok: true, value: '100%25:%7Bs1%7D' });
    expect(keyOf(p, { tenant: '%3A', principal: 'x' })).toEqual({ ok: true, value: '%253A:x' });
  });

  it('reports the first missing dim', () => {
    const sut = keyOf(policy('p', { key: ['tenant', 'client', 'route'] }), { tenant: 'acme' });

    expect(sut).toEqual({ ok: false, missing: 'client' });
  });

  it('gives one shared key for an empty key list', () => {
    expect(keyOf(policy('p', { key: [] }), { tenant: 'acme' })).toEqual({ ok: true, value: '' });
  });

  it('uses the token selector as normalized (already hashed)', () => {
    expect(keyOf(policy('p', { key: ['token'] }), { token: 't_abc' })).toEqual({ ok: true, value: 't_abc' });
  });

  it('keys by attributes too: a name that is no selector dim is looked up among the attributes', () => {
    // given: an Envoy descriptor path `generic_key` → `remote_address` (a counter per address)
    const p = policy('p', { key: ['generic_key', 'remote_address'] });

    const sut = keyOf(p, { tenant: 'acme' }, { generic_key: 'g:1', remote_address: '10.0.0.1' });

    expect(sut).toEqual({ ok: true, value: 'g%3A1:10.0.0.1' });
    expect(keyOf(p, {}, { generic_key: 'g' })).toEqual({ ok: false, missing: 'remote_address' });
    // a selector dim is never read from an attribute of the same name
    expect(keyOf(policy('q', { key: ['tenant'] }), {}, { tenant: 'acme' })).toEqual({
      ok: false,
      missing: 'tenant',
    });
  });
});

describe('match_prefix / unless_prefix (Envoy wildcard values)', () => {
  const files = (value: string) => ({ selectors: {}, attributes: { domain: 'd', files: value } });
  const wild = policy('wild', {
    key: [],
    match: match({ domain: ['d'] }),
    matchPrefix: match({ files: ['files/'] }),
    unless: match({ files: ['files/exact'] }),
  });
  const keyOnly = policy('key-only', {
    key: ['files'],
    match: match({ domain: ['d'] }),
    unless: match({ files: ['files/exact'] }),
    unlessPrefix: match({ files: ['files/'] }),
  });

  it.each<[string, string[]]>([
    ['files/a.pdf', ['wild']],
    ['files/', ['wild']],
    ['files/exact', []],
    ['file', ['key-only']],
    ['other/files/x', ['key-only']],
  ])('%s → %j', (value, expected) => {
    const { selectors, attributes } = files(value);

    const sut = selectPolicies(setOf(wild, keyOnly), selectors, attributes, true);

    expect(names(sut)).toEqual(expected);
  });

  it('an exact value of `match` for the same name also holds (OR over values and prefixes)', () => {
    const p = policy('p', { key: [], match: match({ files: ['x'] }), matchPrefix: match({ files: ['y/'] }) });

    expect(names(selectPolicies(setOf(p), {}, { files: 'x' }))).toEqual(['p']);
    expect(names(selectPolicies(setOf(p), {}, { files: 'y/1' }))).toEqual(['p']);
    expect(names(selectPolicies(setOf(p), {}, { files: 'z' }))).toEqual([]);
  });

  it('empty unless and unless_prefix exempt nobody', () => {
    const p = policy('p', { key: [], unlessPrefix: match({}) });

    expect(names(selectPolicies(setOf(p), {}, { files: 'x' }))).toEqual(['p']);
  });
});
