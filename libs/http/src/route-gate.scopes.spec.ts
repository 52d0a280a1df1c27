import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accessConfig,
  BearerTokens,
  compileTokenFile,
  envTokenEntries,
  GRANT_KEY,
  tokenDigestHex,
  type TokenGrant,
} from '@tally/auth';
import { installRouteGate } from './route-gate';

const FILE = `tokens:
  - { name: acme-reader, sha256: ${tokenDigestHex('acme-reader')}, roles: [query], tenants: [acme] }
  - { name: reader, sha256: ${tokenDigestHex('reader')}, roles: [query] }
`;

/** The roles and tenant rule of the route gate, route by route, with a tokens file's grants. */
describe(`${installRouteGate.name} with scoped tokens`, () => {
  let sut: FastifyInstance;
  let granted: string | undefined;

  beforeAll(async () => {
    const compiled = compileTokenFile(FILE, envTokenEntries([], 'admin-x'));
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
    const tokens = new BearerTokens(
      { auth: 'bearer', callerTokens: [], tokensFile: 'f' },
      { current: compiled.set },
    );
    sut = Fastify();
    installRouteGate(sut, { tokens, maxInflight: 10 });
    const handler = (request: FastifyRequest): { ok: true } => {
      granted = (request as FastifyRequest & { [GRANT_KEY]?: TokenGrant })[GRANT_KEY]?.name;
      return { ok: true };
    };
    sut.get('/unmarked', handler);
    sut.get('/open', { config: accessConfig('public') }, handler);
    sut.get('/every-tenant', { config: accessConfig('query') }, handler);
    sut.get('/one-tenant', { config: accessConfig('query', { perTenant: true }) }, handler);
    await sut.ready();
  });
  afterAll(async () => {
    await sut.close();
  });

  const outcome = async (url: string, token?: string): Promise<string> => {
    const res = await sut.inject({
      method: 'GET',
      url,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return res.statusCode === 200 ? 'ok' : `${res.statusCode} ${res.json<{ code: string }>().code}`;
  };

  it.each([
    ['a route without a declared access needs the admin role', '/unmarked', 'reader', '403 auth.forbidden'],
    ['the admin token opens it', '/unmarked', 'admin-x', 'ok'],
    ['a public route needs nothing', '/open', undefined, 'ok'],
    ['an unscoped reader on a route about every tenant', '/every-tenant', 'reader', 'ok'],
    ['a scoped reader on a route about every tenant', '/every-tenant', 'acme-reader', '403 auth.forbidden'],
    ['a scoped reader on a route that judges the tenant itself', '/one-tenant', 'acme-reader', 'ok'],
    ['no token', '/one-tenant', undefined, '401 auth.missing'],
    ['an unknown token', '/one-tenant', 'nobody', '401 auth.invalid'],
  ] as [string, string, string | undefined, string][])('%s', async (_case, url, token, expected) => {
    expect(await outcome(url, token)).toBe(expected);
  });

  it('leaves the grant on the request for the handler (@Granted(), the hot routes)', async () => {
    granted = undefined;

    await outcome('/one-tenant', 'acme-reader');

    expect(granted).toBe('acme-reader');
  });
});
