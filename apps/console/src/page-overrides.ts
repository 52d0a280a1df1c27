import { api, ApiFailure, grantFor, qs } from './api.js';
import { errorBox, field, h, table } from './dom.js';
import { limitsText, parseLimits } from './limits.js';
import { go, type Page } from './page.js';

interface Override {
  policy: string;
  key: string;
  tenant: string | null;
  limits: Record<string, number>;
  expires_at: string | null;
  reason: string;
  set_by: string;
  version: number;
  updated_at: string;
}

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
        ...(writable ? [''] : []),
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

/** The decision API's address of one override; `tenant` only for a policy whose key has none. */
function address(policy: string, key: string, tenant?: string): string {
  const path = `/v1/decision-api/overrides/${encodeURIComponent(policy)}/${encodeURIComponent(key)}`;
  return tenant ? `${path}?${qs({ tenant })}` : path;
}

function setForm(notice: HTMLElement, redraw: () => Promise<void>): HTMLElement {
  const problem = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { 'aria-label': 'Set an override' },
    h('h2', {}, 'Set an override'),
    h(
      'p',
      { class: 'note', id: 'set-help' },
      'The key as the policy builds it (its key values joined by ":", "-" for a policy without key). Limits per window, e.g. minute=0, hourly=100: windows not named keep the policy\'s. Setting one that exists replaces it.',
    ),
    h(
      'div',
      { class: 'filters' },
      field(
        'Override policy',
        h('input', { id: 'set-policy', name: 'policy', required: true, autocomplete: 'off' }),
      ),
      field(
        'Override key',
        h('input', {
          id: 'set-key',
          name: 'key',
          required: true,
          autocomplete: 'off',
          'aria-describedby': 'set-help',
        }),
      ),
      field(
        'Override tenant (optional)',
        h('input', { id: 'set-tenant', name: 'tenant', autocomplete: 'off' }),
      ),
    ),
    h(
      'div',
      { class: 'filters' },
      field(
        'Limits (window=limit)',
        h('input', { id: 'set-limits', name: 'limits', required: true, autocomplete: 'off' }),
      ),
      field(
        'Expires at (UTC, optional)',
        h('input', { id: 'set-expires', name: 'expires_at', autocomplete: 'off', size: 21 }),
      ),
      field(
        'Reason',
        h('input', { id: 'set-reason', name: 'reason', required: true, autocomplete: 'off', maxlength: 500 }),
      ),
      h('button', { type: 'submit' }, 'Set override'),
    ),
    problem,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const value = (n: string) => ((f.get(n) as string | null) ?? '').trim();
    const limits = parseLimits(value('limits'));
    if (!limits.ok) {
      problem.replaceChildren(errorBox(new Error(`Limits: ${limits.error}`)));
      return;
    }
    problem.replaceChildren();
    void api<Override>(
      'overrides:write',
      address(value('policy'), value('key'), value('tenant') || undefined),
      {
        method: 'PUT',
        body: {
          limits: limits.limits,
          reason: value('reason'),
          ...(value('expires_at') ? { expires_at: value('expires_at') } : {}),
        },
      },
    ).then(
      (o) => {
        notice.replaceChildren(
          h(
            'p',
            { 'data-testid': 'override-notice' },
            `Set ${o.policy} for ${o.key}: ${limitsText(o.limits)} (version ${o.version}).`,
          ),
        );
        form.reset();
        void redraw();
      },
      (error: unknown) =>
        problem.replaceChildren(
          errorBox(error),
          ...(error instanceof ApiFailure && error.errors.length > 0
            ? [
                h(
                  'ul',
                  { 'data-testid': 'override-errors' },
                  error.errors.map((x) => h('li', {}, `${x.path}: ${x.message}`)),
                ),
              ]
            : []),
        ),
    );
  });
  return form;
}
