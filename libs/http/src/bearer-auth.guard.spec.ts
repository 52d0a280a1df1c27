import 'reflect-metadata';
import { type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { RequireAccess } from './access.decorator';
import { ApiError } from './api-error';
import { BearerAuthGuard } from './bearer-auth.guard';
import { BearerTokens } from './bearer-tokens';
import { GRANT_KEY } from './http.constants';
import { compileTokenFile } from './token-file.compiler';
import { envTokenEntries, tokenDigestHex } from './token-set';

class Routes {
  unmarked(): void {}
  @RequireAccess('public') open(): void {}
  @RequireAccess('query') everyTenant(): void {}
  @RequireAccess('query', { perTenant: true }) oneTenant(): void {}
}

const FILE = `tokens:
  - { name: acme-reader, sha256: ${tokenDigestHex('acme-reader')}, roles: [query], tenants: [acme] }
  - { name: reader, sha256: ${tokenDigestHex('reader')}, roles: [query] }
`;
const compiled = compileTokenFile(FILE, envTokenEntries([], 'admin-x'));
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const tokens = new BearerTokens(
  { auth: 'bearer', callerTokens: [], tokensFile: 'f' },
  { current: compiled.set },
);

function contextOf(handler: keyof Routes, token: string | undefined) {
  const request: Record<string | symbol, unknown> = {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    url: '/v1/x?secret=1',
  };
  const context = {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
  return { context, request };
}

describe(BearerAuthGuard.name, () => {
  const sut = new BearerAuthGuard(new Reflector(), tokens);

  const outcome = (handler: keyof Routes, token?: string): string => {
    try {
      sut.canActivate(contextOf(handler, token).context);
      return 'ok';
    } catch (error) {
      const body = (error as ApiError).getResponse() as { code: string };
      return `${(error as ApiError).getStatus()} ${body.code}`;
    }
  };

  it.each([
    ['a route without @RequireAccess needs the admin role', 'unmarked', 'reader', '403 auth.forbidden'],
    ['the admin token opens it', 'unmarked', 'admin-x', 'ok'],
    ['a public route needs nothing', 'open', undefined, 'ok'],
    ['an unscoped reader on a route about every tenant', 'everyTenant', 'reader', 'ok'],
    ['a scoped reader on a route about every tenant', 'everyTenant', 'acme-reader', '403 auth.forbidden'],
    ['a scoped reader on a route that judges the tenant itself', 'oneTenant', 'acme-reader', 'ok'],
    ['no token', 'oneTenant', undefined, '401 auth.missing'],
  ] as [string, keyof Routes, string | undefined, string][])('%s', (_case, handler, token, expected) => {
    expect(outcome(handler, token)).toBe(expected);
  });

  it('leaves the grant on the request for @Granted()', () => {
    const { context, request } = contextOf('oneTenant', 'acme-reader');

    sut.canActivate(context);

    expect((request[GRANT_KEY] as { name: string }).name).toBe('acme-reader');
  });
});
