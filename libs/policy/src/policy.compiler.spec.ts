import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePolicyFile, versionOf } from './policy.compiler';
import type { PolicySet } from './policy.types';

const FIXTURES = resolve(__dirname, '../../../test/fixtures/policies');
const read = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const PERIOD = 'must be a duration between 1ms and 31d (e.g. 500ms, 1s, 1m, 1h, 1d)';
const DIMS = 'selector dims (tenant, principal, token, client, route) or attribute names ([a-z0-9_.-]{1,64})';

/** One fixture per bad config, with the exact text an operator sees (envoyproxy/ratelimit style). */
const BAD: Record<string, string[]> = {
  'bad-match.yaml': [
    'policies[0].unless: must be a mapping of names to a value or a list of values',
    'policies[0].match.route: must list at least one value',
    'policies[0].match.port: must be a string or a list of strings (quote numbers and booleans)',
    'policies[0].match.plan[1]: must be a string (quote numbers and booleans)',
    'policies[0].match.token: cannot match on token: token values are hashed before matching',
    'policies[0].match["Bad Name"]: names must match [a-z0-9_.-]{1,64}',
    'policies[0].match.region: must be 1..256 bytes without surrounding spaces or control characters',
  ],
  'bad-mode.yaml': ['policies[0].mode: must be one of enforce, shadow'],
  'bad-names.yaml': [
    'policies[0].name: must match [a-z0-9][a-z0-9_.-]{0,63}',
    'policies[0].windows[0].name: must match [a-z0-9][a-z0-9_.-]{0,63}',
    'policies[0].group: must match [a-z0-9][a-z0-9_.-]{0,63}',
    'policies[1].name: is required',
  ],
  'bad-on-backend-failure.yaml': [
    'policies[0].on_backend_failure: must be one of fail_open, fail_closed, local_fallback',
  ],
  'bad-role.yaml': ['policies[0].windows[0].role: must be one of burst, sustained'],
  'calendar-month-with-duration.yaml': [
    'policies[0].windows[0].period: must be 1mo (or omitted) for calendar_month',
  ],
  'concurrency-lease-ttl.yaml': [
    'policies[0].windows[0].lease_ttl: is required for concurrency',
    'policies[0].windows[1].period: must be omitted for concurrency (its leases last lease_ttl)',
    'policies[0].windows[2].lease_ttl: must be a duration between 1ms and 31d (e.g. 30s, 5m)',
    'policies[0].windows[3].lease_ttl: is only valid with algorithm concurrency',
  ],
  'gcra-burst.yaml': [
    'policies[0].windows[0].burst: is required for gcra',
    'policies[0].windows[1].burst: must be a positive integer, at most 9007199254740991',
    'policies[0].windows[2].burst: is only valid with algorithm gcra',
    'policies[0].windows[3].burst: burst × period in ms must be at most 4503599627370495 for gcra (here 2000000000 × 2678400000); lower the burst or the period',
  ],
  'duplicate-policy-names.yaml': ['policies[2].name: duplicate policy name "same" (first at policies[0])'],
  'duplicate-window-names.yaml': [
    'policies[0].windows[1].name: duplicate window name "w" in this policy (first at windows[0])',
  ],
  'empty-file.yaml': ['(root): the file is empty'],
  'empty-windows.yaml': ['policies[0].windows: must be a non-empty list of windows'],
  'enabled-not-boolean.yaml': ['policies[0].enabled: must be true or false'],
  'key-missing.yaml': ['policies[0].key: is required'],
  'limit-not-positive-integer.yaml': [
    'policies[0].windows[0].limit: must be a positive integer, at most 9007199254740991',
    'policies[0].windows[1].limit: must be a positive integer, at most 9007199254740991',
    'policies[0].windows[2].limit: must be a positive integer, at most 9007199254740991',
    'policies[0].windows[3].limit: must be a positive integer, at most 9007199254740991',
    'policies[0].windows[4].limit: is required',
    'policies[0].windows[5].limit: must be a positive integer, at most 9007199254740991',
  ],
  'limit-times-period-too-large.yaml': [
    'policies[0].windows[1].limit: limit × period in ms must be at most 9007199254740991 for token_bucket (here 104249992 × 86400000); lower the limit or the period',
    'policies[0].windows[2].limit: limit × period in ms must be at most 3002399751580330 for sliding_window (here 34749998 × 86400000); lower the limit or the period',
  ],
  'many-errors.yaml': [
    `policies[1].key: unknown dim "Account"; must be ${DIMS}`,
    'policies[1].windows[0].limit: must be a positive integer, at most 9007199254740991',
    `policies[1].windows[0].period: ${PERIOD}`,
    'policies[1].mode: must be one of enforce, shadow',
    'policies[2].windows: must be a non-empty list of windows',
    'policies[2].name: duplicate policy name "a" (first at policies[0])',
  ],
  'local-fallback-overflow.yaml': [
    'policies[0].local_fallback_overflow: must be one of fail_open, fail_closed',
    'policies[1].local_fallback_overflow: only applies with on_backend_failure: local_fallback',
  ],
  'max-cost-invalid.yaml': [
    'policies[0].max_cost: must be a positive integer, at most 9007199254740991',
    'policies[1].max_cost: must be a positive integer, at most 9007199254740991',
  ],
  'month-period-on-fixed-window.yaml': [
    'policies[0].windows[0].period: 1mo is only valid with algorithm calendar_month',
  ],
  'period-malformed.yaml': [0, 1, 2, 3].map((i) => `policies[0].windows[${i}].period: ${PERIOD}`),
  'period-missing.yaml': ['policies[0].windows[0].period: is required'],
  'period-out-of-range.yaml': [1, 2].map((i) => `policies[0].windows[${i}].period: ${PERIOD}`),
  'policies-missing.yaml': ['policy: unknown field', 'policies: is required'],
  'policy-not-a-mapping.yaml': ['policies[0]: each entry must be a mapping'],
  'repeated-key-dim.yaml': ['policies[0].key: must not repeat a dim'],
  'root-not-a-mapping.yaml': ['(root): must be a mapping with a "policies" list'],
  'unknown-algorithm.yaml': [
    'policies[1].windows[0].algorithm: must be one of fixed_window, sliding_window, token_bucket, calendar_month, concurrency, gcra',
  ],
  'unknown-fields.yaml': [
    'version: unknown field',
    'policies[0].limit: unknown field',
    'policies[0].windows[0].burst: is only valid with algorithm gcra',
  ],
  'unknown-key-dim.yaml': [`policies[0].key: unknown dim "User", "ip:v4"; must be ${DIMS}`],
  'window-not-a-mapping.yaml': ['policies[0].windows[0]: each entry must be a mapping'],
  'windows-not-a-list.yaml': ['policies[0].windows: must be a non-empty list of windows'],
  'yaml-duplicate-key.yaml': ['line 4, column 5: YAML: Map keys must be unique'],
  'yaml-syntax.yaml': [
    'line 4, column 5: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
  ],
};

function compileGood(): PolicySet {
  const result = compilePolicyFile(read('good.yaml'), () => 1_700_000_000_000);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.set;
}

describe(compilePolicyFile.name, () => {
  it('has a table row for every bad fixture and a fixture for every row', () => {
    expect(Object.keys(BAD).sort()).toEqual(readdirSync(join(FIXTURES, 'bad')).sort());
  });

  it.each(Object.entries(BAD))('rejects bad/%s with every error listed', (file, expected) => {
    const sut = compilePolicyFile(read(join('bad', file)));

    expect(sut.ok).toBe(false);
    expect(sut.ok ? [] : sut.errors.map((e) => `${e.path}: ${e.message}`)).toEqual(expected);
  });

  it('compiles good.yaml into the documented shape', () => {
    const sut = compileGood();

    expect(sut.version).toBe(versionOf(read('good.yaml')));
    expect(sut.version).toMatch(/^[0-9a-f]{12}$/);
    expect(sut.loadedAt).toBe(1_700_000_000_000);
    expect(sut.policies.map((p) => p.name)).toEqual([
      'notary-machine-evaluations',
      'tenant-premium-v2',
      'tenant-premium',
      'tenant-default',
      'token-per-client',
      'global-upload-guard',
    ]);
    expect(sut.policies[0]).toEqual({
      name: 'notary-machine-evaluations',
      match: { route: ['evaluate', 'batch_evaluate'] },
      unless: { principal_class: ['self_attestation'] },
      key: ['principal'],
      windows: [
        { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 100, periodMs: 1000 },
        { name: 'sustained', role: 'sustained', algorithm: 'fixed_window', limit: 6000, periodMs: 60_000 },
      ],
      maxCost: 50,
      onBackendFailure: 'fail_open',
      mode: 'enforce',
      enabled: true,
    });
  });

  it('applies the defaults: enforce, enabled, fail_closed, empty match/unless, no group', () => {
    const sut = compileGood().policies[4];

    expect(sut).toMatchObject({
      mode: 'enforce',
      enabled: true,
      onBackendFailure: 'fail_closed',
      unless: {},
    });
    expect(sut).not.toHaveProperty('group');
    expect(sut.match).toEqual({ route: ['upload'], region: ['eu-west-1', 'eu-central-1'] });
    expect(sut.key).toEqual(['tenant', 'token', 'client']);
  });

  it('defaults max_cost to the smallest window limit', () => {
    // given token-per-client's limits 10, 1000 and 20000 and no max_cost
    const sut = compileGood().policies[4];

    expect(sut.maxCost).toBe(10);
  });

  it('compiles every algorithm and period, calendar months to the nominal 31d', () => {
    const byName = new Map(
      compileGood().policies.flatMap((p) => p.windows.map((w) => [`${p.name}/${w.name}`, w] as const)),
    );

    expect(byName.size).toBe(10);
    expect(byName.get('tenant-default/hourly')).toMatchObject({
      algorithm: 'sliding_window',
      periodMs: 3_600_000,
    });
    expect(byName.get('tenant-default/monthly')).toMatchObject({
      algorithm: 'calendar_month',
      periodMs: 31 * 86_400_000,
    });
    expect(byName.get('token-per-client/burst')).toMatchObject({ algorithm: 'token_bucket', periodMs: 500 });
    expect(byName.get('token-per-client/daily')).toMatchObject({ periodMs: 86_400_000 });
    expect(byName.get('token-per-client/monthly')).toMatchObject({
      algorithm: 'calendar_month',
      limit: 20_000,
    });
  });

  it('compiles a concurrency window with its lease_ttl as the period', () => {
    const text = [
      'policies:',
      '  - name: jobs',
      '    key: [tenant]',
      '    windows:',
      '      - { name: inflight, role: burst, algorithm: concurrency, limit: 10, lease_ttl: 30s }',
      '      - { name: rate, role: sustained, algorithm: fixed_window, limit: 100, period: 1m }',
    ].join('\n');

    const sut = compilePolicyFile(text);

    expect(sut.ok && sut.set.policies[0].windows).toEqual([
      { name: 'inflight', role: 'burst', algorithm: 'concurrency', limit: 10, periodMs: 30_000 },
      { name: 'rate', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 60_000 },
    ]);
  });

  it('keeps groups, shadow and disabled flags', () => {
    const sut = compileGood().policies.slice(1, 4);

    expect(sut.map((p) => [p.group, p.mode, p.enabled])).toEqual([
      ['tenant-tier', 'shadow', true],
      ['tenant-tier', 'enforce', false],
      ['tenant-tier', 'enforce', true],
    ]);
  });

  it('freezes the compiled set', () => {
    const sut = compileGood();

    expect(Object.isFrozen(sut)).toBe(true);
    expect(Object.isFrozen(sut.policies[0])).toBe(true);
    expect(Object.isFrozen(sut.policies[0].windows[0])).toBe(true);
    expect(Object.isFrozen(sut.policies[0].match.route)).toBe(true);
  });

  it('versions by content: same text same version, any edit a new one', () => {
    const text = read('good.yaml');

    expect(versionOf(text)).toBe(versionOf(text));
    expect(versionOf(`${text}\n# edited`)).not.toBe(versionOf(text));
  });

  it('accepts an explicitly empty policy list', () => {
    const sut = compilePolicyFile('policies: []\n');

    expect(sut.ok && sut.set.policies).toEqual([]);
  });

  it('accepts the example file shipped for config/', () => {
    const sut = compilePolicyFile(readFileSync(join(__dirname, 'examples/policies.example.yaml'), 'utf8'));

    expect(sut.ok ? [] : sut.errors).toEqual([]);
  });

  it('compiles local_fallback with its overflow mode, fail_closed unless declared', () => {
    const yaml = (overflow: string) => `
policies:
  - name: p
    key: [tenant]
    on_backend_failure: local_fallback
${overflow}    windows: [{ name: w, role: sustained, algorithm: fixed_window, limit: 10, period: 1m }]
`;
    const declared = compilePolicyFile(yaml('    local_fallback_overflow: fail_open\n'));
    const defaulted = compilePolicyFile(yaml(''));

    expect(declared.ok && declared.set.policies[0]).toMatchObject({
      onBackendFailure: 'local_fallback',
      localFallbackOverflow: 'fail_open',
    });
    expect(defaulted.ok && defaulted.set.policies[0]).toMatchObject({
      onBackendFailure: 'local_fallback',
      localFallbackOverflow: 'fail_closed',
    });
    // other fail modes carry no overflow mode at all
    expect(compileGood().policies[0]).not.toHaveProperty('localFallbackOverflow');
  });

  it('keeps a max_cost larger than the smallest limit as given', () => {
    const sut = compilePolicyFile(
      'policies:\n  - { name: p, key: [], max_cost: 500, windows: [{ name: w, role: burst, algorithm: token_bucket, limit: 5, period: 1s }] }\n',
    );

    expect(sut.ok && sut.set.policies[0].maxCost).toBe(500);
  });

  it('reports an unresolvable YAML alias instead of throwing', () => {
    const sut = compilePolicyFile('policies: *nowhere\n');

    expect(sut.ok).toBe(false);
    expect(sut.ok ? [] : sut.errors.map((e) => e.message).join()).toMatch(/^YAML: /);
  });
});
