import { api, ApiFailure, can, token, type Session } from './api.js';
import { errorBox, h } from './dom.js';
import { auditPage } from './page-audit.js';
import { namespacesPage } from './page-namespaces.js';
import { overviewPage } from './page-overview.js';
import { pipelinePage } from './page-pipeline.js';
import { policiesPage } from './page-policies.js';
import { usagePage } from './page-usage.js';
import type { Page } from './page.js';

type PageName = Parameters<typeof can>[1];
const PAGES: readonly { name: PageName; title: string; page: Page }[] = [
  { name: 'overview', title: 'Overview', page: overviewPage },
  { name: 'usage', title: 'Usage', page: usagePage },
  { name: 'audit', title: 'Audit trail', page: auditPage },
  { name: 'pipeline', title: 'Ledger and consumers', page: pipelinePage },
  { name: 'policies', title: 'Policies', page: policiesPage },
  { name: 'namespaces', title: 'Namespaces', page: namespacesPage },
];

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
let session: Session | null = null;
let leave: (() => void) | void;

function signIn(problem?: unknown): void {
  nav.replaceChildren();
  who.replaceChildren();
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true });
  const form = h(
    'form',
    { class: 'signin card', 'aria-label': 'Sign in' },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'note' },
      'A Tally bearer token. It stays in this tab (sessionStorage) and is sent only to this server. Pages the token may not read are not shown.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Token'), input),
    problem ? errorBox(problem) : null,
    h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    token.set(input.value.trim());
    void start();
  });
  main.replaceChildren(form);
  input.focus();
}

async function start(): Promise<void> {
  if (!token.get()) return signIn();
  try {
    session = await api<Session>('/v1/session');
  } catch (error) {
    token.clear();
    return signIn(
      error instanceof ApiFailure && error.status === 401 ? new Error('This token is not accepted.') : error,
    );
  }
  who.replaceChildren(
    h(
      'span',
      {},
      `${session.name} · ${session.roles.join(', ')}${session.tenants ? ` · ${session.tenants.join(', ')}` : ''}`,
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          token.clear();
          session = null;
          location.hash = '';
          signIn();
        },
      },
      'Sign out',
    ),
  );
  await route();
}

async function route(): Promise<void> {
  if (session === null) return;
  const visible = PAGES.filter((p) => can(session as Session, p.name));
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
  if (current === undefined) {
    main.replaceChildren(
      h('h1', {}, 'Nothing to show'),
      h('p', {}, 'This token has no role the console reads (query or admin).'),
    );
    return;
  }
  document.title = `${current.title} · Tally console`;
  main.replaceChildren(h('h1', {}, current.title), h('p', { class: 'note' }, 'Loading…'));
  try {
    leave = await current.page(main, session, new URLSearchParams(query ?? ''));
  } catch (error) {
    main.append(errorBox(error));
  }
  main.setAttribute('data-page', current.name);
}

window.addEventListener('hashchange', () => void route());
void start();
