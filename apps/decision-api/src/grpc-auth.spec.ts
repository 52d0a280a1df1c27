import { status } from '@grpc/grpc-js';
import { BearerTokens, tokenDigestHex, TokenGrant, TokenSet } from '@tally/auth';
import { describe, expect, it } from 'vitest';
import { GrpcCallerAuth, isRefusal } from './grpc-auth';

const CALLER = 'caller-token-0123456789';
const OTHER = 'other-caller-token-0123';
const ADMIN = 'admin-token-0123456789';
const ACME = 'acme-decide-token-0123456789';
const QUERY = 'query-only-token-0123456789';

/** The simple form plus two file-like scoped entries, as the token store would hold them. */
const SET = new TokenSet('test', [
  entry(CALLER, new TokenGrant('TALLY_API_TOKENS[0]', new Set(['decide', 'query']))),
  entry(OTHER, new TokenGrant('TALLY_API_TOKENS[1]', new Set(['decide', 'query']))),
  entry(ADMIN, new TokenGrant('TALLY_ADMIN_TOKEN', new Set(['admin']))),
  entry(ACME, new TokenGrant('acme', new Set(['decide']), new Set(['acme']))),
  entry(QUERY, new TokenGrant('reader', new Set(['query']))),
]);

function entry(token: string, grant: TokenGrant) {
  return { digest: Buffer.from(tokenDigestHex(token), 'hex'), grant };
}

describe(GrpcCallerAuth.name, () => {
  const sut = new GrpcCallerAuth(new BearerTokens({ auth: 'bearer', callerTokens: [] }, { current: SET }));

  it.each<{ case: string; header: string | string[] | undefined; code: status | 'ok' }>([
    { case: 'a caller token', header: `Bearer ${CALLER}`, code: 'ok' },
    { case: 'the second caller token', header: `Bearer ${OTHER}`, code: 'ok' },
    { case: 'a tenant-scoped decide token', header: `Bearer ${ACME}`, code: 'ok' },
    { case: 'a lower-case scheme and trailing space', header: `bearer ${CALLER} `, code: 'ok' },
    { case: 'the admin token (admin only)', header: `Bearer ${ADMIN}`, code: status.PERMISSION_DENIED },
    { case: 'a query-only token', header: `Bearer ${QUERY}`, code: status.PERMISSION_DENIED },
    { case: 'no metadata', header: undefined, code: status.UNAUTHENTICATED },
    { case: 'an unknown token', header: 'Bearer nope-nope-nope-nope', code: status.UNAUTHENTICATED },
    { case: 'a prefix of a token', header: `Bearer ${CALLER.slice(0, -1)}`, code: status.UNAUTHENTICATED },
    { case: 'a token without the scheme', header: CALLER, code: status.UNAUTHENTICATED },
    { case: 'another scheme', header: `Basic ${CALLER}`, code: status.UNAUTHENTICATED },
    {
      case: 'a good token after a bad first value',
      header: ['Bearer bad', `Bearer ${CALLER}`],
      code: status.UNAUTHENTICATED,
    },
  ])('$case → $code', ({ header, code }) => {
    const result = sut.authorize(header);

    expect(isRefusal(result) ? result.code : 'ok').toBe(code);
    expect(sut.headerRefusal(header)?.code ?? 'ok').toBe(code);
    // the same from one peer, twice (the second answer recalled when the first was accepted)
    for (let i = 0; i < 2; i++) {
      const byPeer = sut.authorize(header, '127.0.0.1:40000');
      expect(isRefusal(byPeer) ? byPeer.code : 'ok').toBe(code);
      expect(sut.headerRefusal(header, '127.0.0.1:40000')?.code ?? 'ok').toBe(code);
    }
  });

  describe('tenantRefusal', () => {
    const scoped = sut.authorize(`Bearer ${ACME}`) as TokenGrant;
    const unscoped = sut.authorize(`Bearer ${CALLER}`) as TokenGrant;
    const req = (tenant?: string) => ({ selectors: tenant === undefined ? {} : { tenant }, cost: 1 });

    it('lets a scoped token decide for its tenant, trimmed as the engine normalizes it', () => {
      expect(sut.tenantRefusal(scoped, [req('acme'), req(' acme ')])).toBeUndefined();
    });

    it.each([
      ['another tenant', [req('acme'), req('globex')]],
      ['a descriptor without a tenant', [req('acme'), req()]],
    ])('refuses the whole call with PERMISSION_DENIED for %s', (_case, requests) => {
      expect(sut.tenantRefusal(scoped, requests)).toEqual({
        code: status.PERMISSION_DENIED,
        message: expect.stringMatching(/tenant/),
      });
    });

    it('lets an unscoped token decide for any tenant or none', () => {
      expect(sut.tenantRefusal(unscoped, [req('globex'), req()])).toBeUndefined();
    });
  });

  it('lets every call through with TALLY_AUTH=none', () => {
    const open = new GrpcCallerAuth(new BearerTokens({ auth: 'none', callerTokens: [] }));

    expect(open.headerRefusal([])).toBeUndefined();
  });
});
