import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileTokenFile } from './token-file.compiler';
import { envTokenEntries, tokenDigestHex } from './token-set';

const FIXTURES = resolve(__dirname, '../../../test/fixtures/tokens');
const read = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
/** The environment every fixture is compiled with (same-as-env.yaml lists these tokens' digests). */
const ENV = envTokenEntries(['fixture-env-caller-token-01'], 'fixture-env-admin-token-001');
const ROLES = 'decide, query, admin, overrides:read, overrides:write, console';
const SHA = 'must be 64 lowercase hex characters: the SHA-256 of the token (tally tokens hash)';
const TENANT = 'must be a tenant: 1..256 bytes (UTF-8) without surrounding spaces or control characters';

/** One fixture per bad file, with the exact text an operator sees (envoyproxy/ratelimit style). */
const BAD: Record<string, string[]> = {
  'admin-with-caller-role.yaml': [
    'tokens[0].roles: admin cannot be combined with decide or query: an admin token must not also be a caller token',
  ],
  'console-with-other-role.yaml': [
    'tokens[0].roles: console stands alone: it holds query and admin (never decide)',
  ],
  'bad-name.yaml': [
    'tokens[0].name: must match [a-z0-9][a-z0-9_.-]{0,63}',
    'tokens[1].name: must match [a-z0-9][a-z0-9_.-]{0,63}',
  ],
  'bad-roles.yaml': [
    `tokens[0].roles: must be a non-empty list of roles (${ROLES})`,
    `tokens[1].roles: unknown role "billing"; must be among ${ROLES}`,
    'tokens[2].roles: must not repeat a role',
    `tokens[3].roles: must be a non-empty list of roles (${ROLES})`,
    `tokens[4].roles: unknown role (a value); must be among ${ROLES}`,
  ],
  'bad-tenants.yaml': [
    'tokens[0].tenants: must be a non-empty list of tenants (omit it for every tenant)',
    'tokens[1].tenants: must be a non-empty list of tenants (omit it for every tenant)',
    `tokens[2].tenants[1]: ${TENANT}`,
    'tokens[2].tenants[2]: must be a string (quote numbers and booleans)',
    `tokens[2].tenants[3]: ${TENANT}`,
    'tokens[2].tenants[4]: repeats tokens[2].tenants[0]',
    'tokens[3].tenants: must be a non-empty list of tenants (omit it for every tenant)',
  ],
  'duplicates.yaml': [
    'tokens[1].name: duplicate token name "a" (first at tokens[0])',
    'tokens[2].sha256: same token as tokens[0]: list a token once',
  ],
  'empty-file.yaml': ['(root): the file is empty'],
  'entry-not-a-mapping.yaml': ['tokens[0]: each entry must be a mapping'],
  'fields-missing.yaml': [
    'tokens[0].name: is required',
    'tokens[0].sha256: is required',
    'tokens[0].roles: is required',
  ],
  'json-syntax.json': ['line 2, column 1: YAML: Flow map must end with a }'],
  'raw-token-as-digest.yaml': [
    `tokens[0].sha256: ${SHA}`,
    `tokens[1].sha256: ${SHA}`,
    `tokens[2].sha256: ${SHA}`,
  ],
  'root-not-a-mapping.yaml': ['(root): must be a mapping with a "tokens" list'],
  'same-as-env.yaml': [
    'tokens[0].sha256: same token as TALLY_API_TOKENS[0]: list a token once, in the file or in the environment',
    'tokens[1].sha256: same token as TALLY_ADMIN_TOKEN: list a token once, in the file or in the environment',
  ],
  'tokens-missing.yaml': ['token: unknown field', 'tokens: is required'],
  'tokens-not-a-list.yaml': ['tokens: must be a list of tokens'],
  'unknown-fields.yaml': ['version: unknown field', 'tokens[0].token: unknown field'],
  'yaml-duplicate-key.yaml': ['line 3, column 5: YAML: Map keys must be unique'],
  'yaml-syntax.yaml': [
    'line 3, column 1: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    'line 3, column 1: YAML: Flow map in block collection must be sufficiently indented and end with a }',
  ],
};

describe(compileTokenFile.name, () => {
  it('has a case for every bad fixture', () => {
    expect(readdirSync(join(FIXTURES, 'bad')).sort()).toEqual(Object.keys(BAD).sort());
  });

  it.each(Object.entries(BAD))('refuses %s with every error, never a value', (file, expected) => {
    const text = read(`bad/${file}`);

    const sut = compileTokenFile(text, ENV);

    expect(sut.ok).toBe(false);
    const lines = sut.ok ? [] : sut.errors.map((e) => `${e.path}: ${e.message}`);
    expect(lines).toEqual(expected);
    // A raw token in the file (where a digest or an unknown field belongs) is never repeated.
    for (const line of lines) expect(line).not.toMatch(/token-000|s3cr3t|[0-9a-f]{40}/);
  });

  it.each(['good.yaml', 'good.json'])(
    'compiles %s after the environment tokens, grants by digest',
    (file) => {
      const sut = compileTokenFile(read(file), ENV);

      if (!sut.ok) throw new Error(JSON.stringify(sut.errors));
      expect(sut.set.version).toMatch(/^[0-9a-f]{12}$/);
      const names = sut.set.entries.map((e) => e.grant.name);
      expect(names.slice(0, 4)).toEqual([
        'TALLY_API_TOKENS[0]',
        'TALLY_ADMIN_TOKEN',
        'acme-checkout',
        'billing-reader',
      ]);
      const acme = sut.set.find('acme-checkout-token-0001');
      expect(acme?.name).toBe('acme-checkout');
      expect([...(acme?.roles ?? [])]).toEqual(['decide']);
      expect([...(acme?.tenants ?? [])]).toEqual(['acme']);
      expect(sut.set.find('billing-reader-token-0001')?.tenants).toBeUndefined();
      expect(sut.set.find('fixture-env-admin-token-001')?.name).toBe('TALLY_ADMIN_TOKEN');
      expect(sut.set.find('acme-checkout-token-000')).toBeUndefined();
    },
  );

  it('reads every role and tenant list of the annotated example', () => {
    const sut = compileTokenFile(read('good.yaml'), []);

    if (!sut.ok) throw new Error(JSON.stringify(sut.errors));
    expect(
      sut.set.entries.map((e) => [e.grant.name, [...e.grant.roles], e.grant.tenants && [...e.grant.tenants]]),
    ).toEqual([
      ['acme-checkout', ['decide'], ['acme']],
      ['billing-reader', ['query'], undefined],
      ['ops', ['admin'], undefined],
      ['globex-services', ['decide', 'query'], ['globex', 'globex:eu']],
    ]);
  });

  it('versions a file by its text', () => {
    const a = compileTokenFile(read('good.yaml'), []);
    const b = compileTokenFile(`${read('good.yaml')}\n# edited\n`, []);

    expect(a.ok && b.ok && a.set.version !== b.set.version).toBe(true);
  });

  it('accepts an empty list: the environment tokens stay the only ones', () => {
    const sut = compileTokenFile('tokens: []\n', ENV);

    expect(sut.ok && sut.set.entries.map((e) => e.grant.name)).toEqual([
      'TALLY_API_TOKENS[0]',
      'TALLY_ADMIN_TOKEN',
    ]);
  });

  it('keys entries by the digest tally tokens hash prints', () => {
    expect(tokenDigestHex('acme-checkout-token-0001')).toBe(
      'd90767ed0881291758e2826c0a6dd5bafdbe9c104c3bf6a8ab5670b4ee9801c4',
    );
  });
});
