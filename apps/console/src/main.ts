import {
  ApiFailure,
  can,
  grantFor,
  request,
  signedIn,
  tokens,
  type Grant,
  type PageName,
  type Session,
} from './api.js';
import { errorBox, h } from './dom.js';
import { auditPage } from './page-audit.js';
import { namespacesPage } from './page-namespaces.js';
import { overridesPage } from './page-overrides.js';
import { overviewPage } from './page-overview.js';
import { pipelinePage } from './page-pipeline.js';
import { policiesPage } from './page-policies.js';
import { usagePage } from './page-usage.js';
import type { Page } from './page.js';

const PAGES: readonly {
  name: PageName;
  title: string;
  page: Page;
  role: 'overview' | 'query' | 'admin' | 'overrides:read';
}[] = [
  { name: 'overview', title: 'Overview', page: overviewPage, role: 'overview' },
  { name: 'usage', title: 'Usage', page: usagePage, role: 'query' },
  { name: 'audit', title: 'Audit trail', page: auditPage, role: 'query' },
  { name: 'pipeline', title: 'Ledger and consumers', page: pipelinePage, role: 'admin' },
  { name: 'policies', title: 'Policies', page: policiesPage, role: 'admin' },
  { name: 'namespaces', title: 'Namespaces', page: namespacesPage, role: 'admin' },
  { name: 'overrides', title: 'Overrides', page: overridesPage, role: 'overrides:read' },
];

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
let grants: Grant[] = [];
let leave: (() => void) | void;

function signIn(problem?: unknown): void {
  nav.replaceChildren();
  who.replaceChildren();
  const first = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
  });
  const second = h('input', { id: 'token2', name: 'token2', type: 'password', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'signin card', 'aria-label': 'Sign in' },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'note' },
      'A Tally bearer token: a console token reads and operates everything. Without one, a query token and an admin token (one each). Tokens stay in this tab (sessionStorage) and are sent only to this server. Pages your tokens may not read are not shown.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Token'), first),
    h('div', { class: 'field' }, h('label', { for: 'token2' }, 'Second token (optional)'), second),
    problem ? errorBox(problem) : null,
    h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    tokens.set([first.value.trim(), second.value.trim()].filter((t) => t !== ''));
    void start();
  });
  main.replaceChildren(form);
  first.focus();
}

async function start(): Promise<void> {
  const held = tokens.get();
  if (held.length === 0) return signIn();
  try {
    grants = await Promise.all(
      held.map(async (token) => ({ ...(await request<Session>('/v1/session', token)), token })),
    );
  } catch (error) {
    tokens.clear();
    return signIn(
      error instanceof ApiFailure && error.status === 401 ? new Error('A token is not accepted.') : error,
    );
  }
  signedIn(grants);
  const describe = (g: Grant) =>
    `${g.name} (${g.roles.join(', ')}${g.tenants ? `; ${g.tenants.join(', ')}` : ''})`;
  who.replaceChildren(
    h('span', {}, grants.map(describe).join(' + ')),
    h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'),
  );
  await route();
}

function signOut(): void {
  tokens.clear();
  grants = [];
  signedIn([]);
  history.replaceState(null, '', location.pathname);
  signIn();
}

async function route(): Promise<void> {
  if (grants.length === 0) return;
  const visible = PAGES.filter((p) => can(p.name));
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const current = visible.find((p) => p.name === path) ?? visible[0];
  nav.replaceChildren(
    h(
      'ul',
      {},
      visible.map((p) =>
        h(
          'li',
          {},
          h('a', { href: `#/${p.name}`, 'aria-current': p === current ? 'page' : undefined }, p.title),
        ),
      ),
    ),
  );
  if (leave) leave();
  leave = undefined;
  main.removeAttribute('data-page');
  if (current === undefined) {
    main.replaceChildren(
      h('h1', {}, 'Nothing to show'),
      h('p', {}, 'These tokens have no role the console reads (console, query, admin or overrides).'),
    );
    return;
  }
  document.title = `${current.title} · Tally console`;
  main.replaceChildren(h('h1', {}, current.title), h('p', { class: 'note' }, 'Loading…'));
  try {
    leave = await current.page(main, grantFor(current.role) as Grant, new URLSearchParams(query ?? ''));
  } catch (error) {
    main.append(errorBox(error));
  }
  main.setAttribute('data-page', current.name);
}

window.addEventListener('hashchange', () => void route());
void start();
