/**
 * The console's one way to call Tally: same origin, a bearer token from sessionStorage. One `console`
 * token holds the query and admin roles; an operator without one may sign in with two tokens (a query
 * token and an admin token: the tokens file forbids one entry holding both). Each call names the role
 * it needs and goes out with the token that holds it.
 */
const TOKENS_KEY = 'tally.console.tokens';

export type Role = 'decide' | 'query' | 'admin' | 'overrides:read' | 'overrides:write' | 'console';

export interface Session {
  readonly name: string;
  readonly roles: readonly Role[];
  readonly tenants: readonly string[] | null;
}

/** A signed-in token and what `GET /v1/session` said it may do. */
export interface Grant extends Session {
  readonly token: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: readonly { path: string; message: string }[] = [],
  ) {
    super(`${code}: ${message}`);
  }
}

export const tokens = {
  get: (): string[] => JSON.parse(sessionStorage.getItem(TOKENS_KEY) ?? '[]') as string[],
  set: (values: readonly string[]): void => sessionStorage.setItem(TOKENS_KEY, JSON.stringify(values)),
  clear: (): void => sessionStorage.removeItem(TOKENS_KEY),
};

let grants: readonly Grant[] = [];

export function signedIn(all: readonly Grant[]): void {
  grants = all;
}

/**
 * The roles that also hold a role, as the server judges them (TokenGrant): `admin` holds both
 * overrides scopes, `console` holds `query` and `admin`.
 */
const IMPLIED: Partial<Record<Role, readonly Role[]>> = {
  query: ['console'],
  admin: ['console'],
  'overrides:read': ['overrides:write', 'admin', 'console'],
  'overrides:write': ['admin', 'console'],
};

/** The grant a call of `role` goes out with: the first signed-in token holding it. */
export function grantFor(role: Role | 'overview'): Grant | undefined {
  if (role === 'overview')
    return grants.find(
      (g) => g.tenants === null && g.roles.some((r) => r === 'query' || r === 'admin' || r === 'console'),
    );
  const holds = [role, ...(IMPLIED[role] ?? [])];
  return grants.find((g) => g.roles.some((r) => holds.includes(r)));
}

export async function request<T>(
  path: string,
  bearer: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const body = (await res.json().catch(() => ({}))) as {
    code?: string;
    message?: string;
    errors?: { path: string; message: string }[];
  };
  if (!res.ok)
    throw new ApiFailure(res.status, body.code ?? 'http', body.message ?? res.statusText, body.errors);
  return body as T;
}

/** A call that needs `role`, with the token that has it. */
export function api<T>(
  role: Role | 'overview',
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const grant = grantFor(role);
  if (grant === undefined)
    return Promise.reject(new ApiFailure(403, 'auth.forbidden', `no signed-in token has the ${role} role`));
  return request<T>(path, grant.token, init);
}

/** Query string from defined values only. */
export function qs(params: Record<string, string | undefined>): string {
  const entries = Object.entries(params).filter(
    (e): e is [string, string] => e[1] !== undefined && e[1] !== '',
  );
  return new URLSearchParams(entries).toString();
}

export type PageName = 'overview' | 'usage' | 'audit' | 'pipeline' | 'policies' | 'namespaces' | 'overrides';

/** Whether a page is listed: only when its calls would be answered for the signed-in tokens. */
export function can(page: PageName): boolean {
  switch (page) {
    case 'overview':
      return grantFor('overview') !== undefined;
    case 'usage':
    case 'audit':
      return grantFor('query') !== undefined;
    case 'pipeline':
    case 'policies':
    case 'namespaces':
      return grantFor('admin')?.tenants === null;
    case 'overrides':
      return grantFor('overrides:read') !== undefined;
  }
}
