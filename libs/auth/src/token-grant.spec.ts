import { describe, expect, it } from 'vitest';
import { type Access } from './access.decorator';
import { TokenGrant } from './token-grant';

const ACCESS: Access[] = ['decide', 'query', 'admin', 'overrides:read', 'overrides:write'];
const allowed = (sut: TokenGrant) => ACCESS.filter((a) => sut.allows(a));

describe(TokenGrant.name, () => {
  it('console: the query and admin routes (and so the overrides) with one token, never decisions', () => {
    const sut = new TokenGrant('console-ops', new Set(['console']));

    expect(allowed(sut)).toEqual(['query', 'admin', 'overrides:read', 'overrides:write']);
  });

  it('keeps the other roles as they were: admin holds the overrides, query holds nothing more', () => {
    expect(allowed(new TokenGrant('ops', new Set(['admin'])))).toEqual([
      'admin',
      'overrides:read',
      'overrides:write',
    ]);
    expect(allowed(new TokenGrant('reader', new Set(['query'])))).toEqual(['query']);
    expect(allowed(new TokenGrant('w', new Set(['overrides:write'])))).toEqual([
      'overrides:read',
      'overrides:write',
    ]);
  });

  it('a tenant-scoped console token is still held to its tenants', () => {
    const sut = new TokenGrant('acme-console', new Set(['console']), new Set(['acme']));

    expect(sut.tenantRefusal('acme')).toBeUndefined();
    expect(sut.tenantRefusal('globex')?.getStatus()).toBe(403);
  });
});
