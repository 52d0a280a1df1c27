import { api, ApiFailure } from './api.js';
import { categoryChart } from './chart.js';
import { badge, errorBox, field, h, table } from './dom.js';
import { iso } from './format.js';
import type { Page } from './page.js';

interface PolicyList {
  version: string;
  loaded_at: string;
  policies: {
    name: string;
    mode: string;
    enabled: boolean;
    key: string[];
    windows: { name: string; algorithm: string; limit: number; period: string }[];
  }[];
}
interface Reloads {
  reloads: {
    at: string;
    trigger: string;
    outcome: string;
    version: string | null;
    errors: { path: string; message: string }[];
  }[];
}
interface Tally {
  applied: number;
  allowed: number;
  denied: number;
}
interface Simulation {
  policySetVersion: string;
  decisions: number;
  actual: { allowed: number; denied: number };
  simulated: { allowed: number; denied: number };
  changed: { allowedToDenied: number; deniedToAllowed: number };
  policies: { policy: string; proposed: boolean; recorded: boolean; actual: Tally; simulated: Tally }[];
}

/** The running set, recent reloads, and a proposed file validated and previewed with `simulate`. */
export const policiesPage: Page = async (root) => {
  root.replaceChildren(h('h1', {}, 'Policies'));
  const [set, reloads] = await Promise.allSettled([
    api<PolicyList>('admin', '/v1/decision-api/policies'),
    api<Reloads>('admin', '/v1/decision-api/policy-reloads'),
  ]);
  if (set.status === 'fulfilled') {
    const v = set.value;
    root.append(
      h(
        'p',
        {},
        'Running set ',
        h('code', { 'data-testid': 'policy-version' }, v.version),
        `, loaded ${v.loaded_at}.`,
      ),
      table(
        'Policies in force',
        ['name', 'mode', 'enabled', 'key', 'windows'],
        v.policies.map((p) => [
          p.name,
          p.mode,
          p.enabled ? 'yes' : 'no',
          p.key.join(', '),
          p.windows.map((w) => `${w.name}: ${w.limit}/${w.period} ${w.algorithm}`).join('; '),
        ]),
        { testId: 'policies-table' },
      ),
    );
  } else root.append(errorBox(set.reason));
  root.append(h('h2', {}, 'Recent reloads'));
  if (reloads.status === 'fulfilled')
    root.append(
      table(
        'Reloads, newest first',
        ['time', 'trigger', 'outcome', 'version', 'errors'],
        reloads.value.reloads.map((r) => [
          r.at,
          r.trigger,
          badge(r.outcome),
          r.version ?? '—',
          r.errors.map((e) => `${e.path}: ${e.message}`).join('; '),
        ]),
        { testId: 'reloads-table' },
      ),
    );
  else root.append(errorBox(reloads.reason));

  const now = Date.now();
  const text = h('textarea', {
    name: 'policies',
    id: 'proposal',
    spellcheck: 'false',
    'aria-describedby': 'proposal-help',
  });
  const file = h('input', { type: 'file', accept: '.yaml,.yml,.json', id: 'proposal-file' });
  file.addEventListener('change', () => {
    const chosen = file.files?.[0];
    if (chosen) void chosen.text().then((t) => (text.value = t));
  });
  const out = h('div', { 'aria-live': 'polite', 'data-testid': 'preview' });
  const form = h(
    'form',
    { 'aria-label': 'Proposed policy file' },
    h('h2', {}, 'Preview a proposed file'),
    h(
      'p',
      { class: 'note', id: 'proposal-help' },
      'Paste or upload a policy file: it is validated as a reload would be, then the recorded decisions of the range are replayed under it (tally simulate). Nothing is changed.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'proposal' }, 'Policy file (YAML or JSON)'), text),
    h(
      'div',
      { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'proposal-file' }, 'Or upload'), file),
    ),
    h(
      'div',
      { class: 'filters' },
      field('From (UTC)', h('input', { name: 'from', value: iso(now - 3_600_000), size: 21 })),
      field('To (UTC)', h('input', { name: 'to', value: iso(now + 60_000), size: 21 })),
      field('Tenant (optional)', h('input', { name: 'tenant', autocomplete: 'off' })),
      h('button', { type: 'submit' }, 'Validate and preview'),
    ),
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const value = (n: string) => (f.get(n) as string | null)?.trim() ?? '';
    out.replaceChildren(h('p', { class: 'note' }, 'Replaying the recorded decisions…'));
    void api<Simulation>('admin', '/v1/policies:simulate', {
      method: 'POST',
      body: {
        policies: text.value,
        from: value('from'),
        to: value('to'),
        ...(value('tenant') ? { tenant: value('tenant') } : {}),
      },
    }).then(
      (sim) => out.replaceChildren(...preview(sim)),
      (error: unknown) =>
        out.replaceChildren(
          errorBox(error),
          ...(error instanceof ApiFailure && error.errors.length > 0
            ? [
                h(
                  'ul',
                  { 'data-testid': 'proposal-errors' },
                  error.errors.map((x) => h('li', {}, `${x.path}: ${x.message}`)),
                ),
              ]
            : []),
        ),
    );
  });
  root.append(form);
};

function preview(sim: Simulation): Node[] {
  return [
    h(
      'p',
      { 'data-testid': 'preview-summary' },
      `Valid (version ${sim.policySetVersion}). ${sim.decisions} recorded decisions: actual ${sim.actual.allowed} allowed, ${sim.actual.denied} denied; proposed ${sim.simulated.allowed} allowed, ${sim.simulated.denied} denied (${sim.changed.allowedToDenied} allowed → denied, ${sim.changed.deniedToAllowed} denied → allowed).`,
    ),
    categoryChart({
      title: 'Denied per policy: actual (filled) vs proposed (outlined)',
      categoryName: 'policy',
      unit: 'decisions',
      categories: sim.policies.map((p) => p.policy),
      series: [
        { label: 'actual denied', values: sim.policies.map((p) => p.actual.denied) },
        { label: 'proposed denied', values: sim.policies.map((p) => p.simulated.denied) },
      ],
    }),
    table(
      'Per policy: actual vs proposed',
      ['policy', 'in', 'actual allowed', 'actual denied', 'proposed allowed', 'proposed denied', 'denied Δ'],
      sim.policies.map((p) => [
        p.policy,
        p.proposed ? (p.recorded ? 'both' : 'new') : 'removed',
        p.actual.allowed,
        p.actual.denied,
        p.simulated.allowed,
        p.simulated.denied,
        p.simulated.denied - p.actual.denied,
      ]),
      { numeric: [2, 3, 4, 5, 6], testId: 'simulation-table' },
    ),
  ];
}
