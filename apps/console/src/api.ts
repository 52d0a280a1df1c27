/** The console's one way to call Tally: same origin, the token from sessionStorage as a bearer. */
const TOKEN_KEY = 'tally.console.token';

export interface Session {
  readonly name: string;
  readonly roles: readonly ('decide' | 'query' | 'admin')[];
  readonly tenants: readonly string[] | null;
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

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token.get() ?? ''}` };
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

/** Query string from defined values only. */
export function qs(params: Record<string, string | undefined>): string {
  const entries = Object.entries(params).filter(
    (e): e is [string, string] => e[1] !== undefined && e[1] !== '',
  );
  return new URLSearchParams(entries).toString();
}

/** What a session may open: a page is listed only when its calls would be answered. */
export function can(
  session: Session,
  page: 'overview' | 'usage' | 'audit' | 'pipeline' | 'policies' | 'namespaces',
): boolean {
  const everyTenant = session.tenants === null;
  switch (page) {
    case 'overview':
      return session.roles.includes('query') && everyTenant;
    case 'usage':
    case 'audit':
      return session.roles.includes('query');
    case 'pipeline':
    case 'policies':
    case 'namespaces':
      return session.roles.includes('admin') && everyTenant;
  }
}
