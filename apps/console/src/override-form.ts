import { api, ApiFailure, qs } from './api.js';
import { errorBox, field, h } from './dom.js';
import { limitsText, parseLimits } from './limits.js';

/** An override as the decision API answers it (`OverrideItem`). */
export interface Override {
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

/** The decision API's address of one override; `tenant` only for a policy whose key has none. */
export function address(policy: string, key: string, tenant?: string): string {
  const path = `/v1/decision-api/overrides/${encodeURIComponent(policy)}/${encodeURIComponent(key)}`;
  return tenant ? `${path}?${qs({ tenant })}` : path;
}

/** The set form (write scope): one override's limits for one key, replacing one in force. */
export function setForm(notice: HTMLElement, redraw: () => Promise<void>): HTMLElement {
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
