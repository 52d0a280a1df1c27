import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli';

const FIXTURES = resolve(__dirname, '../../../test/fixtures/tokens');
const TOKEN = 'acme-checkout-token-0001';
const DIGEST = 'd90767ed0881291758e2826c0a6dd5bafdbe9c104c3bf6a8ab5670b4ee9801c4';

async function run(argv: string[], stdin?: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    argv,
    {},
    {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      ...(stdin === undefined ? {} : { stdin: () => Promise.resolve(stdin) }),
    },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('tally tokens hash', () => {
  it('prints the digest line of the token on stdin, its line break not part of it', async () => {
    const sut = await run(['tokens', 'hash'], `${TOKEN}\n`);

    expect(sut).toEqual({ code: 0, out: `sha256: ${DIGEST}`, err: '' });
  });

  it('prints a whole entry to paste, and JSON for scripts', async () => {
    const args = [
      'tokens',
      'hash',
      '--name',
      'acme-checkout',
      '--roles',
      'decide',
      '--tenants',
      'acme,globex:eu',
    ];

    const text = await run(args, TOKEN);
    const json = await run([...args, '--json'], TOKEN);

    expect(text.out).toBe(
      [
        '- name: acme-checkout',
        `  sha256: ${DIGEST}`,
        '  roles: [decide]',
        '  tenants: ["acme", "globex:eu"]',
      ].join('\n'),
    );
    expect(JSON.parse(json.out)).toEqual({
      name: 'acme-checkout',
      sha256: DIGEST,
      roles: ['decide'],
      tenants: ['acme', 'globex:eu'],
    });
    expect(`${text.out}${json.out}`).not.toContain(TOKEN);
  });

  it.each([
    [
      'a short token',
      ['tokens', 'hash'],
      'short\n',
      'tally tokens hash: the token on stdin must be at least 16 printable ASCII characters without spaces (got 5 characters)',
    ],
    [
      'a token with a space',
      ['tokens', 'hash'],
      'acme checkout token 0001',
      'tally tokens hash: the token on stdin must be at least 16 printable ASCII characters without spaces (got 24 characters)',
    ],
    [
      'an entry the file rules refuse',
      ['tokens', 'hash', '--name', 'ops', '--roles', 'admin,decide', '--tenants', 'acme,'],
      TOKEN,
      [
        'tally tokens hash: --roles: admin cannot be combined with decide or query: an admin token must not also be a caller token',
        '--tenants[1]: must be a tenant: 1..256 bytes (UTF-8) without surrounding spaces or control characters',
      ].join('\n'),
    ],
    [
      'roles without a name',
      ['tokens', 'hash', '--roles', 'query'],
      TOKEN,
      'tally tokens hash: --name: is required',
    ],
  ])('refuses %s with exit 2, never echoing the token', async (_case, argv, stdin, message) => {
    const sut = await run(argv, stdin);

    expect(sut).toEqual({ code: 2, out: '', err: message });
  });
});

describe('tally tokens check', () => {
  it('lists the tokens of a valid file', async () => {
    const sut = await run(['tokens', 'check', `${FIXTURES}/good.yaml`]);

    expect(sut.code).toBe(0);
    expect(sut.out.split('\n').slice(1)).toEqual([
      'TOKEN            ROLES         TENANTS',
      '---------------  ------------  ----------------',
      'acme-checkout    decide        acme',
      'billing-reader   query         (every tenant)',
      'ops              admin         (every tenant)',
      'globex-services  decide,query  globex,globex:eu',
    ]);
  });

  it('lists every error of an invalid file and exits 1', async () => {
    const file = `${FIXTURES}/bad/duplicates.yaml`;

    const sut = await run(['tokens', 'check', file, '--json']);

    expect(sut.code).toBe(1);
    expect(JSON.parse(sut.out)).toEqual({
      ok: false,
      file,
      errors: [
        { path: 'tokens[1].name', message: 'duplicate token name "a" (first at tokens[0])' },
        { path: 'tokens[2].sha256', message: 'same token as tokens[0]: list a token once' },
      ],
    });
  });
});
