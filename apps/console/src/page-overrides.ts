import { api, grantFor, qs } from './api.js';
import { errorBox, field, h, table } from './dom.js';
import { limitsText } from './limits.js';
import { address, setForm, type Override } from './override-form.js';
import { go, type Page } from './page.js';

const PAGE_SIZE = '50';

/**
 * Runtime overrides (the decision API's `/v1/overrides`, through the projector with this token): the
 * list by policy and tenant, page by page; with the write scope, a form to set one and a confirmed
 * removal. A token with the read scope only sees the list.
 */
export const overridesPage: Page = async (root, session, params) => {
  const policy = params.get('policy') ?? '';
  const tenant = params.get('tenant') ?? session.tenants?.[0] ?? '';
  const limit = params.get('limit') ?? PAGE_SIZE;
  const cursor = params.get('cursor') ?? '';
  const writable = grantFor('overrides:write') !== undefined;

  const tenantField =
    session.tenants === null
      ? h('input', { name: 'tenant', value: tenant, autocomplete: 'off' })
      : h(
          'select',
          { name: 'tenant' },
          session.tenants.map((t) => h('option', { value: t, selected: t === tenant }, t)),
        );
  const filters = h(
    'form',
    { class: 'filters', 'aria-label': 'Override filters' },
    field('Policy', h('input', { name: 'policy', value: policy, autocomplete: 'off' })),
    field('Tenant', tenantField),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(filters);
    go('overrides', {
      policy: ((f.get('policy') as string | null) ?? '').trim(),
      tenant: (f.get('tenant') as string | null) ?? '',
    });
  });

  const listing = h('div', { 'aria-live': 'polite' });
  const notice = h('div', { role: 'status' });
  const draw = async (): Promise<void> => {
    try {
      const page = await api<{ items: Override[]; next_cursor: string | null }>(
        'overrides:read',
        `/v1/decision-api/overrides?${qs({ policy, tenant, limit, cursor })}`,
      );
      listing.replaceChildren(...list(page.items, page.next_cursor));
    } catch (error) {
      listing.replaceChildren(errorBox(error));
    }
  };

  const list = (items: Override[], next: string | null): Node[] => [
    table(
      'Overrides in force',
      [
        'policy',
        'key',
        'tenant',
        'limits',
        'expires',
        'reason',
        'set by',
        'version',
        'updated',
        ...(writable ? ['action'] : []),
      ],
      items.map((o) => [
        o.policy,
        h('code', {}, o.key),
        o.tenant ?? '—',
        limitsText(o.limits),
        o.expires_at ?? 'until removed',
        o.reason,
        o.set_by,
        o.version,
        o.updated_at,
        ...(writable
          ? [
              h(
                'button',
                { type: 'button', class: 'secondary', onclick: () => confirmRemove(o) },
                `Remove ${o.policy} ${o.key}…`,
              ),
            ]
          : []),
      ]),
      { numeric: [7], testId: 'overrides-table' },
    ),
    h(
      'p',
      { class: 'filters' },
      cursor
        ? h(
            'a',
            { href: `#/overrides?${qs({ policy, tenant, limit: params.get('limit') ?? undefined })}` },
            'First page',
          )
        : null,
      next
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () =>
                go('overrides', { policy, tenant, limit: params.get('limit') ?? undefined, cursor: next }),
            },
            'Next page',
          )
        : null,
    ),
  ];

  const confirmRemove = (o: Override): void => {
    const problem = h('div', { 'aria-live': 'polite' });
    const confirm = h('button', { type: 'submit' }, 'Remove');
    const dialog = h(
      'dialog',
      { 'aria-labelledby': 'remove-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'remove-title' }, `Remove the override of ${o.policy} for ${o.key}?`),
        h(
          'p',
          {},
          `Limits ${limitsText(o.limits)} end now: the policy's own limits apply from the next decision.`,
        ),
        problem,
        h(
          'p',
          { class: 'filters' },
          confirm,
          h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'),
        ),
      ),
    );
    dialog.querySelector('form')?.addEventListener('submit', (e) => {
      e.preventDefault();
      confirm.disabled = true;
      void api<unknown>('overrides:write', address(o.policy, o.key, o.tenant ?? undefined), {
        method: 'DELETE',
      }).then(
        () => {
          dialog.close();
          notice.replaceChildren(
            h('p', { 'data-testid': 'override-notice' }, `Removed the override of ${o.policy} for ${o.key}.`),
          );
          void draw();
        },
        (error: unknown) => {
          confirm.disabled = false;
          problem.replaceChildren(errorBox(error));
        },
      );
    });
    dialog.addEventListener('close', () => dialog.remove());
    root.append(dialog);
    dialog.showModal();
  };

  root.replaceChildren(
    h('h1', {}, 'Overrides'),
    h(
      'p',
      { class: 'note' },
      'Runtime limits of one policy for one key, in force from the next decision (a limit of 0 blocks the key). Listed as the decision API answers, page by page.',
    ),
    filters,
    notice,
    listing,
    ...(writable ? [setForm(notice, draw)] : []),
  );
  await draw();
};
