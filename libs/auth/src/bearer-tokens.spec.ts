import { describe, expect, it, vi } from 'vitest';
import { type Access } from './access.decorator';
import { ApiError } from '@tally/errors';
import { BearerTokens } from './bearer-tokens';
import { compileTokenFile } from './token-file.compiler';
import { OPEN_GRANT, type TokenGrant } from './token-grant';
import { envTokenEntries, TokenSet, tokenDigestHex } from './token-set';

const ENV = envTokenEntries(['caller-a', 'caller-b'], 'admin-x');
const FILE = `tokens:
  - { name: acme-decider, sha256: ${tokenDigestHex('acme-decide')}, roles: [decide], tenants: [acme, 'a:b'] }
  - { name: reader, sha256: ${tokenDigestHex('reader')}, roles: [query] }
  - { name: acme-ops, sha256: ${tokenDigestHex('acme-ops')}, roles: [admin], tenants: [acme] }
`;

function setOf(text: string): TokenSet {
  const compiled = compileTokenFile(text, ENV);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return compiled.set;
}

describe(BearerTokens.name, () => {
  const source = { current: setOf(FILE) };
  const sut = new BearerTokens({ auth: 'bearer', callerTokens: [], tokensFile: 'tokens.yaml' }, source);
  const grantOf = (token: string, access: Access = 'caller') =>
    sut.authorize(`Bearer ${token}`, access) as TokenGrant;

  describe('header stage', () => {
    it.each([
      ['decide', undefined, 401, 'auth.missing'],
      ['decide', 'Basic Y2FsbGVyLWE=', 401, 'auth.missing'],
      ['decide', 'Bearer caller-c', 401, 'auth.invalid'],
      ['decide', 'Bearer caller-', 401, 'auth.invalid'],
      ['admin', 'Bearer nobody-knows-me', 401, 'auth.invalid'],
      ['decide', 'Bearer caller-b', undefined, undefined],
      ['decide', 'bearer   caller-a  ', undefined, undefined],
      ['decide', ['Bearer caller-a', 'Bearer other'], undefined, undefined],
      ['query', 'Bearer caller-a', undefined, undefined],
      ['admin', 'Bearer caller-a', 403, 'auth.forbidden'],
      ['decide', 'Bearer admin-x', 403, 'auth.forbidden'],
      ['query', 'Bearer admin-x', 403, 'auth.forbidden'],
      ['admin', 'Bearer admin-x', undefined, undefined],
      ['decide', 'Bearer acme-decide', undefined, undefined],
      ['query', 'Bearer acme-decide', 403, 'auth.forbidden'],
      ['query', 'Bearer reader', undefined, undefined],
      ['decide', 'Bearer reader', 403, 'auth.forbidden'],
      ['admin', 'Bearer acme-ops', undefined, undefined],
      ['caller', 'Bearer reader', undefined, undefined],
      ['caller', 'Bearer admin-x', undefined, undefined],
      ['caller', 'Bearer nope', 401, 'auth.invalid'],
      ['public', undefined, undefined, undefined],
    ] as [Access, string | string[] | undefined, number | undefined, string | undefined][])(
      '%s access with %j → %s %s',
      (access, header, status, code) => {
        const refusal = sut.refusal(header, access);

        expect(refusal?.getStatus()).toBe(status);
        expect((refusal?.getResponse() as { code?: string } | undefined)?.code).toBe(code);
      },
    );

    it('names the missing role, never the token', () => {
      const refusal = sut.refusal('Bearer reader', 'decide');

      expect(refusal?.getResponse()).toEqual({
        code: 'auth.forbidden',
        message: 'this call needs a token with the decide role',
      });
    });

    it('hands back the grant of the token found', () => {
      const grant = grantOf('acme-decide', 'decide');

      expect(grant.name).toBe('acme-decider');
      expect(grantOf('caller-b').name).toBe('TALLY_API_TOKENS[1]');
    });
  });

  describe('tenant stage', () => {
    it.each([
      ['its tenant', 'acme', undefined],
      ['its tenant with surrounding spaces (as the engine trims it)', ' acme ', undefined],
      ['a tenant with a colon', 'a:b', undefined],
      ['another tenant', 'globex', 'this token may not act for this tenant'],
      ['a tenant that only starts alike', 'acme2', 'this token may not act for this tenant'],
      ['no tenant', undefined, 'this token is limited to some tenants: the call must name one of them'],
      [
        'a tenant that is not a string',
        ['acme'],
        'this token is limited to some tenants: the call must name one of them',
      ],
    ])('judges a scoped token acting for %s', (_case, tenant, message) => {
      const refusal = grantOf('acme-decide').tenantRefusal(tenant);

      expect(refusal?.getResponse()).toEqual(message && { code: 'auth.forbidden', message });
      expect(refusal?.getStatus()).toBe(message && 403);
      expect(refusal?.tokenName).toBe(message && 'acme-decider');
    });

    it.each(['acme', 'globex', undefined, 42])('lets an unscoped token act for %j', (tenant) => {
      expect(grantOf('caller-a').tenantRefusal(tenant)).toBeUndefined();
      expect(grantOf('reader').tenantRefusal(tenant)).toBeUndefined();
    });
  });

  it('reads the source live: a reloaded set takes effect on the next request', () => {
    const live = { current: setOf(FILE) };
    const tokens = new BearerTokens({ auth: 'bearer', callerTokens: [], tokensFile: 't' }, live);
    expect(tokens.refusal('Bearer reader', 'query')).toBeUndefined();

    // when the file is replaced by one without the reader
    live.current = setOf('tokens: []\n');

    expect(tokens.refusal('Bearer reader', 'query')?.getStatus()).toBe(401);
    expect(tokens.refusal('Bearer caller-a', 'query')).toBeUndefined();
  });

  describe('per connection', () => {
    const given = () => {
      const live = { current: setOf(FILE) };
      const find = vi.spyOn(live.current, 'find');
      const tokens = new BearerTokens({ auth: 'bearer', callerTokens: [], tokensFile: 't' }, live);
      return { live, find, tokens };
    };

    it('does not hash an accepted header again on the connection that sent it', () => {
      const { find, tokens } = given();
      const socket = {};

      const first = tokens.authorize('Bearer reader', 'query', socket);
      const second = tokens.authorize('Bearer reader', 'query', socket);

      expect(second).toBe(first);
      expect((second as TokenGrant).name).toBe('reader');
      expect(find).toHaveBeenCalledTimes(1);
    });

    it('judges every other header, connection and refused header afresh', () => {
      const { find, tokens } = given();
      const socket = {};
      tokens.authorize('Bearer reader', 'query', socket);

      // a near miss and a longer header on the remembered connection
      expect((tokens.authorize('Bearer readex', 'query', socket) as ApiError).getStatus()).toBe(401);
      expect((tokens.authorize('Bearer reader2', 'query', socket) as ApiError).getStatus()).toBe(401);
      // a refused header was not remembered: refused again, after a full look-up
      expect((tokens.authorize('Bearer readex', 'query', socket) as ApiError).getStatus()).toBe(401);
      // another connection with the accepted header
      expect((tokens.authorize('Bearer reader', 'query', {}) as TokenGrant).name).toBe('reader');
      expect(find).toHaveBeenCalledTimes(5);
    });

    it('still checks the role on every request', () => {
      const { tokens } = given();
      const socket = {};
      tokens.authorize('Bearer reader', 'query', socket);

      expect((tokens.authorize('Bearer reader', 'admin', socket) as ApiError).getStatus()).toBe(403);
    });

    it('forgets every connection when the token set is reloaded (a revoked token stops at once)', () => {
      const { live, tokens } = given();
      const socket = {};
      tokens.authorize('Bearer reader', 'query', socket);

      // when the file is replaced by one without the reader
      live.current = setOf('tokens: []\n');

      expect((tokens.authorize('Bearer reader', 'query', socket) as ApiError).getStatus()).toBe(401);
    });
  });

  describe('per peer (gRPC)', () => {
    const given = () => {
      const live = { current: setOf(FILE) };
      const find = vi.spyOn(live.current, 'find');
      const tokens = new BearerTokens({ auth: 'bearer', callerTokens: [], tokensFile: 't' }, live);
      return { live, find, tokens };
    };
    const PEER = '127.0.0.1:50001';

    it('does not hash an accepted header again for the peer that sent it', () => {
      const { find, tokens } = given();

      const first = tokens.authorizePeer('Bearer acme-decide', 'decide', PEER);
      const second = tokens.authorizePeer('Bearer acme-decide', 'decide', PEER);

      expect(second).toBe(first);
      expect((second as TokenGrant).name).toBe('acme-decider');
      expect(find).toHaveBeenCalledTimes(1);
    });

    it('answers exactly as authorize does, header by header', () => {
      const { tokens } = given();
      const headers = [
        undefined,
        '',
        'Basic Y2FsbGVyLWE=',
        'Bearer caller-',
        'Bearer reader',
        'Bearer admin-x',
      ];
      for (const header of [...headers, 'Bearer caller-a', ...headers, 'Bearer caller-a']) {
        const byPeer = tokens.authorizePeer(header, 'decide', PEER);
        const fresh = tokens.authorize(header, 'decide');

        expect(byPeer instanceof ApiError ? byPeer.getResponse() : byPeer).toEqual(
          fresh instanceof ApiError ? fresh.getResponse() : fresh,
        );
      }
    });

    it('judges every other header, peer and refused header afresh', () => {
      const { find, tokens } = given();
      tokens.authorizePeer('Bearer reader', 'query', PEER);

      // a near miss and a longer header from the remembered peer
      expect((tokens.authorizePeer('Bearer readex', 'query', PEER) as ApiError).getStatus()).toBe(401);
      expect((tokens.authorizePeer('Bearer reader2', 'query', PEER) as ApiError).getStatus()).toBe(401);
      // a refused header was not remembered: refused again, after a full look-up
      expect((tokens.authorizePeer('Bearer readex', 'query', PEER) as ApiError).getStatus()).toBe(401);
      // another peer with the accepted header
      expect((tokens.authorizePeer('Bearer reader', 'query', '127.0.0.1:50002') as TokenGrant).name).toBe(
        'reader',
      );
      expect(find).toHaveBeenCalledTimes(5);
    });

    it('still checks the role on every call', () => {
      const { tokens } = given();
      tokens.authorizePeer('Bearer reader', 'query', PEER);

      expect((tokens.authorizePeer('Bearer reader', 'decide', PEER) as ApiError).getStatus()).toBe(403);
    });

    it('refuses a revoked token from the peer that had it accepted, once the set is reloaded', () => {
      const { live, tokens } = given();
      expect((tokens.authorizePeer('Bearer acme-decide', 'decide', PEER) as TokenGrant).name).toBe(
        'acme-decider',
      );

      // when the file is replaced by one without acme-decide (the environment's tokens stay)
      live.current = setOf('tokens: []\n');

      expect((tokens.authorizePeer('Bearer acme-decide', 'decide', PEER) as ApiError).getStatus()).toBe(401);
      expect(tokens.authorizePeer('Bearer caller-a', 'decide', PEER)).not.toBeInstanceOf(ApiError);
    });

    it('lets everything through with auth none', () => {
      const open = new BearerTokens({ auth: 'none', callerTokens: [] });

      expect(open.authorizePeer(undefined, 'decide', PEER)).toBe(OPEN_GRANT);
    });
  });

  it('builds the simple form alone from the options (decide + query; admin only)', () => {
    const simple = new BearerTokens({ auth: 'bearer', callerTokens: ['caller-a'], adminToken: 'admin-x' });

    expect(simple.refusal('Bearer caller-a', 'decide')).toBeUndefined();
    expect(simple.refusal('Bearer caller-a', 'query')).toBeUndefined();
    expect(simple.refusal('Bearer admin-x', 'decide')?.getStatus()).toBe(403);
    expect(simple.refusal('Bearer admin-x', 'admin')).toBeUndefined();
  });

  it('refuses to read a tokens file on its own: the app has one store, or sets would diverge', () => {
    expect(() => new BearerTokens({ auth: 'bearer', callerTokens: [], tokensFile: 'tokens.yaml' })).toThrow(
      /inject BearerTokens/,
    );
  });

  it('lets everything through with auth none, with every role and tenant', () => {
    const open = new BearerTokens({ auth: 'none', callerTokens: [] });

    expect(open.refusal(undefined, 'admin')).toBeUndefined();
    const grant = open.authorize(undefined, 'decide');
    expect(grant).toBe(OPEN_GRANT);
    expect(grant instanceof ApiError ? grant : grant.tenantRefusal('anyone')).toBeUndefined();
  });
});
