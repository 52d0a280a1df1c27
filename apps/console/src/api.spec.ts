import { describe, expect, it } from 'vitest';
import { can, grantFor, qs, signedIn, type Grant } from './api';

const reader: Grant = { token: 'r', name: 'reader', roles: ['query'], tenants: null };
const acme: Grant = { token: 'a', name: 'acme', roles: ['query'], tenants: ['acme'] };
const ops: Grant = { token: 'o', name: 'ops', roles: ['admin'], tenants: null };
const acmeOps: Grant = { token: 'ao', name: 'acme-ops', roles: ['admin'], tenants: ['acme'] };
const ovReader: Grant = { token: 'or', name: 'ov-reader', roles: ['overrides:read'], tenants: null };
const ovWriter: Grant = { token: 'ow', name: 'ov-writer', roles: ['overrides:write'], tenants: ['acme'] };
const consoleOps: Grant = { token: 'c', name: 'console-ops', roles: ['console'], tenants: null };
const acmeConsole: Grant = { token: 'ac', name: 'acme-console', roles: ['console'], tenants: ['acme'] };
const PAGES = ['overview', 'usage', 'audit', 'pipeline', 'policies', 'namespaces', 'overrides'] as const;
const visible = (grants: Grant[]) => {
  signedIn(grants);
  return PAGES.filter((p) => can(p));
};

describe('console pages by token', () => {
  it('lists a page only when the signed-in tokens would be answered on it', () => {
    expect(visible([reader, ops])).toEqual([...PAGES]);
    expect(visible([reader])).toEqual(['overview', 'usage', 'audit']);
    expect(visible([ops])).toEqual(['overview', 'pipeline', 'policies', 'namespaces', 'overrides']);
    // Tenant-scoped: its own usage and audit; nothing that sums every tenant.
    expect(visible([acme])).toEqual(['usage', 'audit']);
    // Overrides are judged per tenant by the decision API: a scoped admin reads its tenants' there.
    expect(visible([acmeOps])).toEqual(['overrides']);
    expect(visible([reader, ovReader])).toEqual(['overview', 'usage', 'audit', 'overrides']);
    expect(visible([ovWriter])).toEqual(['overrides']);
  });

  it('one console token opens every page, and sends every call; scoped, only its tenant pages', () => {
    expect(visible([consoleOps])).toEqual([...PAGES]);
    for (const role of ['overview', 'query', 'admin', 'overrides:read', 'overrides:write'] as const)
      expect(grantFor(role)?.token).toBe('c');
    expect(grantFor('decide')).toBeUndefined();
    expect(visible([acmeConsole])).toEqual(['usage', 'audit', 'overrides']);
  });

  it('lets the overrides scopes follow from each other as the server judges them', () => {
    signedIn([reader, ovReader]);
    expect(grantFor('overrides:read')?.token).toBe('or');
    expect(grantFor('overrides:write')).toBeUndefined();
    signedIn([ovWriter]);
    expect(grantFor('overrides:read')?.token).toBe('ow');
    signedIn([reader, ops]);
    expect(grantFor('overrides:write')?.token).toBe('o');
  });

  it('sends each call with the token that holds its role', () => {
    signedIn([reader, ops]);

    expect(grantFor('query')?.token).toBe('r');
    expect(grantFor('admin')?.token).toBe('o');
    expect(grantFor('overview')?.token).toBe('r');
    expect(grantFor('decide')).toBeUndefined();
  });
});

describe(qs.name, () => {
  it('leaves out unset and empty parameters and encodes the rest', () => {
    expect(qs({ tenant: 'a b', policy: '', key: undefined, at: '2026-12-01T10:00:00Z' })).toBe(
      'tenant=a+b&at=2026-12-01T10%3A00%3A00Z',
    );
  });
});
