import { readFileSync } from 'node:fs';
import { compilePolicyFile } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { importEnvoyConfig, type EnvoyImportResult } from './envoy-import';

type Ok = Extract<EnvoyImportResult, { ok: true }>;
const ok = (text: string): Ok => {
  const result = importEnvoyConfig(text);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  // Every output must be a policy file the decision API accepts.
  const compiled = compilePolicyFile(result.yaml);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return result;
};
const messages = (notes: readonly { path: string; message: string }[]) =>
  notes.map((n) => `${n.path} ${n.message}`);

describe(importEnvoyConfig.name, () => {
  it('maps a nested path: keys with a value into match (with domain), keys without one into key', () => {
    const sut = ok(`
domain: edge
descriptors:
  - key: route
    value: login
    descriptors:
      - key: tenant
        rate_limit: { unit: hour, requests_per_unit: 20 }
`);
    expect(sut.policies).toEqual([
      {
        name: 'edge-route-login-tenant',
        match: { domain: 'edge', route: 'login' },
        key: ['tenant'],
        windows: [{ name: 'hour', role: 'sustained', algorithm: 'fixed_window', limit: 20, period: '1h' }],
      },
    ]);
    expect(sut.unmapped).toEqual([]);
  });

  it.each([
    ['second', '1s', 'burst'],
    ['MINUTE', '1m', 'burst'],
    ['hour', '1h', 'sustained'],
    ['day', '1d', 'sustained'],
    ['week', '7d', 'sustained'],
    ['month', '30d', 'sustained'],
  ])('maps unit %s to a fixed window of %s (epoch-aligned like ratelimit)', (unit, period, role) => {
    const sut = ok(
      `{ domain: d, descriptors: [{ key: tenant, rate_limit: { unit: ${unit}, requests_per_unit: 7 } }] }`,
    );
    expect(sut.policies[0].windows).toEqual([
      { name: unit.toLowerCase(), role, algorithm: 'fixed_window', limit: 7, period },
    ]);
  });

  it('maps every rule of a path, an intermediate one included, and shadow_mode to mode: shadow', () => {
    const sut = ok(`
domain: d
descriptors:
  - key: generic_key
    value: a
    shadow_mode: true
    rate_limit: { unit: second, requests_per_unit: 1 }
    descriptors:
      - key: client
        rate_limit: { unit: minute, requests_per_unit: 2 }
`);
    expect(sut.policies.map((p) => [p.name, p.match, p.key, p.mode])).toEqual([
      ['d-generic_key-a', { domain: 'd', generic_key: 'a' }, [], 'shadow'],
      ['d-generic_key-a-client', { domain: 'd', generic_key: 'a' }, ['client'], undefined],
    ]);
  });

  it('exempts a key-only rule and its subtree from the exact sibling values (Envoy prefers them)', () => {
    const sut = ok(`
domain: d
descriptors:
  - { key: route, value: health, rate_limit: { unlimited: true } }
  - { key: route, value: login, rate_limit: { unit: minute, requests_per_unit: 1 } }
  - key: route
    rate_limit: { unit: minute, requests_per_unit: 5 }
    descriptors:
      - { key: tenant, rate_limit: { unit: hour, requests_per_unit: 9 } }
`);
    expect(sut.policies.map((p) => [p.name, p.unless])).toEqual([
      ['d-route-login', undefined],
      ['d-route', { route: ['health', 'login'] }],
      ['d-route-tenant', { route: ['health', 'login'] }],
    ]);
    expect(messages(sut.notes)).toEqual([
      'd: descriptors[0] `unlimited`: no policy; a descriptor no policy fits is OK and uncounted',
    ]);
  });

  it('keys a counter by any descriptor key without a value, nested paths included (the peer cache key)', () => {
    const sut = ok(`
domain: d
descriptors:
  - { key: remote_address, rate_limit: { unit: second, requests_per_unit: 1 } }
  - key: generic_key
    value: api
    descriptors:
      - { key: key1_local, rate_limit: { unit: minute, requests_per_unit: 2 } }
`);
    expect(sut.policies.map((p) => [p.name, p.match, p.key])).toEqual([
      ['d-remote_address', { domain: 'd' }, ['remote_address']],
      ['d-generic_key-api-key1_local', { domain: 'd', generic_key: 'api' }, ['key1_local']],
    ]);
    expect(sut.unmapped).toEqual([]);
  });

  it('maps wildcard values: match_prefix, a key dim unless share_threshold, precedence exact > wildcard > key-only', () => {
    const sut = ok(`
domain: d
descriptors:
  - { key: files, value: files/*, share_threshold: true, rate_limit: { unit: hour, requests_per_unit: 10 } }
  - { key: files, value: files/a*, rate_limit: { unit: hour, requests_per_unit: 5 } }
  - { key: files, value: files/exact, rate_limit: { unit: hour, requests_per_unit: 1 } }
  - { key: files, rate_limit: { unit: hour, requests_per_unit: 2 } }
  - key: dir
    value: tmp/*
    share_threshold: true
    descriptors:
      - { key: user, rate_limit: { unit: minute, requests_per_unit: 3 } }
`);
    expect(sut.policies.map((p) => [p.match_prefix, p.unless, p.unless_prefix, p.key])).toEqual([
      [{ files: ['files/'] }, { files: ['files/exact'] }, undefined, []],
      [{ files: ['files/a'] }, { files: ['files/exact'] }, { files: ['files/'] }, ['files']],
      [undefined, undefined, undefined, []],
      [undefined, { files: ['files/exact'] }, { files: ['files/', 'files/a'] }, ['files']],
      [{ dir: ['tmp/'] }, undefined, undefined, ['user']],
    ]);
    expect(sut.unmapped).toEqual([]);
  });

  it('refuses share_threshold on a value that is not a wildcard, as ratelimit does', () => {
    const sut = importEnvoyConfig(
      'domain: d\ndescriptors: [{ key: a, value: x, share_threshold: true, rate_limit: { unit: hour, requests_per_unit: 1 } }]',
    );
    expect(sut.ok ? [] : messages(sut.errors)).toEqual([
      'd: descriptors[0].share_threshold only applies to a wildcard value (`prefix*`)',
    ]);
  });

  it('reports precisely what it cannot map and maps the rest', () => {
    const sut = ok(`
domain: d
descriptors:
  - { key: path, value: "/a*i", rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: generic_key, value: y, rate_limit: { unit: year, requests_per_unit: 1 } }
  - { key: X-Api-Key, value: k, rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: path, value: "*", rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: generic_key, value: zero, rate_limit: { unit: second, requests_per_unit: 0 } }
  - { key: domain, value: x, rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: token, value: secret, rate_limit: { unit: second, requests_per_unit: 1 } }
  - key: tenant
    detailed_metric: true
    colour: blue
    quota_mode: true
    metadata: { a: b }
    value_to_metric: true
    rate_limit: { unit: second, requests_per_unit: 3, name: r1, replaces: [{ name: other }], burst: 2 }
    descriptors:
      - { key: tenant, rate_limit: { unit: second, requests_per_unit: 1 } }
`);
    expect(sut.policies.map((p) => p.name)).toEqual(['d-tenant']);
    expect(messages(sut.unmapped)).toEqual([
      'd: descriptors[0] wildcard value `/a*i` with `*` before its end: only `prefix*` is mapped: this rule and the rules below it are not mapped',
      "d: descriptors[1] unit `year` not mapped: Tally's longest period is 31d",
      'd: descriptors[2] key `X-Api-Key` is not a Tally attribute name ([a-z0-9_.-]{1,64}): this rule and the rules below it are not mapped',
      'd: descriptors[3] wildcard value `*` (any value): this rule and the rules below it are not mapped',
      'd: descriptors[4] `requests_per_unit: 0` not mapped: Tally limits are positive',
      'd: descriptors[5] key `domain` is the request domain in Tally, not a descriptor entry: this rule and the rules below it are not mapped',
      'd: descriptors[6] key `token` with a value: Tally hashes tokens, so a value never matches: this rule and the rules below it are not mapped',
      'd: descriptors[7] unknown field `colour` ignored',
      'd: descriptors[7] `quota_mode` not mapped: Tally has no quota mode; the rule is mapped as an enforced limit',
      'd: descriptors[7] `metadata` not mapped: Tally returns no per-rule metadata',
      'd: descriptors[7].rate_limit unknown field `burst` ignored',
      'd: descriptors[7].rate_limit `replaces` not mapped: Tally applies every matching rule of each descriptor on its own',
      'd: descriptors[7].descriptors[0] key `tenant` repeats an outer key (one value per name): this rule and the rules below it are not mapped',
    ]);
    expect(messages(sut.notes)).toEqual([
      'd: descriptors[7] `detailed_metric` ignored: Tally labels its metrics by policy',
      'd: descriptors[7] `value_to_metric` ignored: Tally labels its metrics by policy',
      'd: descriptors[7].rate_limit `name` ignored: only `replaces` refers to it',
    ]);
  });

  it('makes names plain, short and unique, deterministically', () => {
    const long = 'v'.repeat(80);
    const text = `
domain: Edge.API
descriptors:
  - { key: generic_key, value: "A B", rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: generic_key, value: "a-b", rate_limit: { unit: second, requests_per_unit: 1 } }
  - { key: generic_key, value: "${long}", rate_limit: { unit: second, requests_per_unit: 1 } }
`;
    const sut = ok(text);
    const names = sut.policies.map((p) => p.name);
    expect(names[0]).toBe('edge.api-generic_key-a-b');
    expect(names[1]).toMatch(/^edge\.api-generic_key-a-b-[0-9a-f]{10}$/);
    expect(names[2]).toMatch(/^edge\.api-generic_key-v+-[0-9a-f]{10}$/);
    expect(names[2].length).toBe(64);
    expect(ok(text).policies.map((p) => p.name)).toEqual(names);
  });

  it.each([
    ['', '(file): no configuration (empty file)'],
    ['descriptors: []', '(document 1): `domain` must be a non-empty string'],
    ['domain: ""', '(document 1): `domain` must be a non-empty string'],
    ['- a', '(document 1): must be a mapping with `domain` and `descriptors`'],
    ['domain: d\ndescriptors: { key: a }', 'd: descriptors: must be a list of descriptors'],
    ['domain: d\ndescriptors: [{ value: a }]', 'd: descriptors[0]: `key` must be a non-empty string'],
    ['domain: d\ndescriptors: [{ key: a, value: 1 }]', 'd: descriptors[0]: `value` must be a string'],
    [
      'domain: d\ndescriptors: [{ key: tenant, rate_limit: { unit: fortnight, requests_per_unit: 1 } }]',
      'd: descriptors[0].rate_limit.unit: must be one of second, minute, hour, day, week, month, year',
    ],
    [
      'domain: d\ndescriptors: [{ key: tenant, rate_limit: { unit: second, requests_per_unit: -1 } }]',
      'd: descriptors[0].rate_limit.requests_per_unit: must be a non-negative integer',
    ],
    ['domain: d\n---\ndomain: d', '(document 2): domain `d` is defined twice'],
    [
      'domain: d\ndescriptors: [{ key: tenant, rate_limit: { unlimited: true, unit: second } }]',
      'd: descriptors[0].rate_limit.unit: must be absent when `unlimited` is true',
    ],
    [
      'domain: d\ndescriptors: [{ key: a, value: x }, { key: a, value: x }]',
      'd: descriptors[1]: duplicates an earlier key/value of this level',
    ],
    ['domain: [', expect.stringMatching(/^\(document 1\): /)],
  ])('refuses invalid input %j', (text, error) => {
    const sut = importEnvoyConfig(text);
    expect(sut.ok).toBe(false);
    if (!sut.ok) expect(sut.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([error]);
  });

  it('converts the realistic multi-domain fixture into a valid policy file', () => {
    const sut = ok(readFileSync('test/fixtures/envoy/ratelimit-config.yaml', 'utf8'));
    expect(sut.policies.map((p) => p.name)).toEqual([
      'edge-tenant',
      'edge-route-login-client',
      'edge-route',
      'edge-generic_key-reports',
      'edge-remote_address',
      'billing-plan-free-tenant',
      'billing-plan-gold-tenant',
    ]);
    expect(sut.unmapped.length).toBe(2);
  });
});

describe('envoyproxy/ratelimit own configs (test/fixtures/envoy/peer, unmodified)', () => {
  const peer = (file: string) => ok(readFileSync(`test/fixtures/envoy/peer/${file}`, 'utf8'));

  it.each([
    ['basic.yaml', 3],
    ['another.yaml', 6],
    ['share_threshold.yaml', 2],
  ])('maps every rule of the integration config %s (%i policies)', (file, n) => {
    const sut = peer(file);
    expect(sut.policies.length).toBe(n);
    expect(sut.unmapped).toEqual([]);
  });

  it('maps the example configs, naming each field it cannot map', () => {
    const sut = peer('example.yaml');
    const R = 'not mapped: Tally applies every matching rule of each descriptor on its own';
    const Q = 'not mapped: Tally has no quota mode; the rule is mapped as an enforced limit';
    expect(sut.policies.length).toBe(14);
    expect(messages(sut.unmapped)).toEqual([
      `rl: descriptors[0].rate_limit \`replaces\` ${R}`,
      `rl: descriptors[1].descriptors[0].rate_limit \`replaces\` ${R}`,
      `rl: descriptors[1].descriptors[2].rate_limit \`replaces\` ${R}`,
      'rl: descriptors[2].descriptors[2] `requests_per_unit: 0` not mapped: Tally limits are positive',
      `rl: descriptors[5] \`quota_mode\` ${Q}`,
      'rl: descriptors[5] `metadata` not mapped: Tally returns no per-rule metadata',
      `rl: descriptors[6] \`quota_mode\` ${Q}`,
      'rl: descriptors[6] `metadata` not mapped: Tally returns no per-rule metadata',
    ]);
    expect(messages(sut.notes)).toEqual([
      'rl: descriptors[1].descriptors[3].rate_limit `name` ignored: only `replaces` refers to it',
      'rl: descriptors[2].descriptors[1].rate_limit `name` ignored: only `replaces` refers to it',
      'rl: descriptors[2].descriptors[2].rate_limit `name` ignored: only `replaces` refers to it',
      'rl: descriptors[2].descriptors[6] `unlimited`: no policy; a descriptor no policy fits is OK and uncounted',
      'rl: descriptors[3] `detailed_metric` ignored: Tally labels its metrics by policy',
      'rl: descriptors[4] `unlimited`: no policy; a descriptor no policy fits is OK and uncounted',
    ]);
    expect(peer('example-config.yaml').unmapped).toEqual([]);
  });
});
