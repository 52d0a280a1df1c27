import { api, qs } from './api.js';
import { categoryChart, timeChart } from './chart.js';
import { errorBox, field, h, table } from './dom.js';
import { iso } from './format.js';
import { bucketStarts, costPerPolicy } from './usage-buckets.js';
import { go, type Page } from './page.js';

interface Usage {
  tenant: string;
  granularity: string;
  buckets: { start: string; policy: string; cost: number; count: number }[];
  total: { cost: number; count: number };
  next_cursor: string | null;
}
interface TopKeys {
  start: string;
  keys: { key: string; cost: number; count: number }[];
  distinct_keys: number;
}

const GRANULARITIES = ['minute', 'hour', 'day', 'month'] as const;
const SPAN_MS: Record<string, number> = {
  minute: 3_600_000,
  hour: 86_400_000,
  day: 30 * 86_400_000,
  month: 365 * 86_400_000,
};

/**
 * Tenant → policy → key: buckets of `/v1/usage` as bars and as the table of the very numbers it
 * answered; a bucket opens its top keys (`/v1/top-keys`), a key narrows the usage to that key.
 */
export const usagePage: Page = async (root, session, params) => {
  const granularity = params.get('granularity') ?? 'minute';
  const now = Date.now();
  const tenant = params.get('tenant') ?? session.tenants?.[0] ?? '';
  const policy = params.get('policy') ?? '';
  const key = params.get('key') ?? '';
  const from = params.get('from') ?? iso(now - (SPAN_MS[granularity] ?? 3_600_000));
  const to = params.get('to') ?? iso(now + 60_000);
  const at = params.get('at') ?? '';

  const tenantField =
    session.tenants === null
      ? h('input', { name: 'tenant', value: tenant, required: true, autocomplete: 'off' })
      : h(
          'select',
          { name: 'tenant' },
          session.tenants.map((t) => h('option', { value: t, selected: t === tenant }, t)),
        );
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Usage filters' },
    field('Tenant', tenantField),
    field('Policy', h('input', { name: 'policy', value: policy, autocomplete: 'off' })),
    field('Key', h('input', { name: 'key', value: key, autocomplete: 'off', disabled: policy === '' })),
    field(
      'Bucket',
      h(
        'select',
        { name: 'granularity' },
        GRANULARITIES.map((g) => h('option', { value: g, selected: g === granularity }, g)),
      ),
    ),
    field('From (UTC)', h('input', { name: 'from', value: from, size: 21 })),
    field('To (UTC)', h('input', { name: 'to', value: to, size: 21 })),
    h('button', { type: 'submit' }, 'Show'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const value = (n: string) => (f.get(n) as string | null)?.trim() ?? '';
    go('usage', {
      tenant: value('tenant'),
      policy: value('policy'),
      key: value('policy') ? value('key') : '',
      granularity: value('granularity'),
      from: value('from'),
      to: value('to'),
    });
  });
  root.replaceChildren(h('h1', {}, 'Usage explorer'), form);
  if (tenant === '') {
    root.append(h('p', { class: 'note' }, 'Choose a tenant.'));
    return;
  }
  const crumbs = h(
    'nav',
    { 'aria-label': 'Drill-down', class: 'note' },
    h('a', { href: `#/usage?${qs({ tenant, granularity, from, to })}` }, `tenant ${tenant}`),
    policy
      ? [
          ' → ',
          h('a', { href: `#/usage?${qs({ tenant, policy, granularity, from, to })}` }, `policy ${policy}`),
        ]
      : null,
    key ? [' → ', `key ${key}`] : null,
  );
  root.append(crumbs);
  try {
    const usage = await api<Usage>(
      'query',
      `/v1/usage?${qs({ tenant, policy, key, granularity, from, to, limit: '5000' })}`,
    );
    const pick = (start: string) => go('usage', { tenant, policy, key, granularity, from, to, at: start });
    root.append(
      h(
        'section',
        { class: 'card', 'aria-label': 'Usage' },
        h('h2', {}, `Usage per ${granularity}${policy ? ` of ${policy}` : ''}${key ? `, key ${key}` : ''}`),
        h(
          'div',
          { class: 'cards' },
          h(
            'div',
            { class: 'stat' },
            'Total cost',
            h('div', { class: 'v', 'data-testid': 'total-cost' }, usage.total.cost),
          ),
          h(
            'div',
            { class: 'stat' },
            'Decisions',
            h('div', { class: 'v', 'data-testid': 'total-count' }, usage.total.count),
          ),
        ),
        usageChart(usage, granularity, from, to, policy && !key ? pick : undefined),
        table(
          'The numbers behind the chart (GET /v1/usage)',
          ['bucket start', 'policy', 'cost', 'count', policy && !key ? 'drill down' : 'top keys'],
          usage.buckets.map((b) => [
            b.start,
            b.policy,
            b.cost,
            b.count,
            policy && !key
              ? h('button', { type: 'button', class: 'link', onclick: () => pick(b.start) }, 'top keys')
              : '—',
          ]),
          { numeric: [2, 3], testId: 'usage-table' },
        ),
        policy ? null : h('p', { class: 'note' }, 'Name a policy to see its top keys per bucket.'),
      ),
    );
    if (policy && !key && at) {
      const top = await api<TopKeys>(
        'query',
        `/v1/top-keys?${qs({ tenant, policy, granularity, at, limit: '20' })}`,
      );
      root.append(
        h(
          'section',
          { class: 'card', 'aria-label': 'Top keys' },
          h('h2', {}, `Top keys of ${policy}, ${granularity} from ${top.start}`),
          h('p', { class: 'note' }, `${top.distinct_keys} distinct keys in this bucket.`),
          categoryChart({
            title: `Cost per key, ${granularity} from ${top.start}`,
            categoryName: 'key',
            unit: 'cost units',
            categories: top.keys.map((k) => k.key),
            series: [{ label: 'cost', values: top.keys.map((k) => k.cost) }],
          }),
          table(
            'Top keys (GET /v1/top-keys)',
            ['key', 'cost', 'count'],
            top.keys.map((k) => [
              h('a', { href: `#/usage?${qs({ tenant, policy, key: k.key, granularity, from, to })}` }, k.key),
              k.cost,
              k.count,
            ]),
            { numeric: [1, 2], testId: 'top-keys-table' },
          ),
        ),
      );
    }
  } catch (error) {
    root.append(errorBox(error));
  }
};

/**
 * Cost per bucket over the whole range asked, a series per policy side by side: a decision counts under
 * every policy that applied, so the policies' costs do not add up to the tenant's (the total above).
 */
function usageChart(
  usage: Usage,
  granularity: string,
  from: string,
  to: string,
  pick: ((start: string) => void) | undefined,
): HTMLElement {
  const starts = bucketStarts(granularity, Date.parse(from), Date.parse(to));
  if (starts === null || starts.length === 0)
    return h(
      'p',
      { class: 'note' },
      starts === null
        ? 'Too many buckets to draw for this range: narrow it (the table has them all).'
        : 'No range to draw: `from` must be a time before `to`.',
    );
  const series = costPerPolicy(usage.buckets, starts);
  return timeChart({
    title: `Cost per ${granularity} by policy (UTC)`,
    unit: 'cost units',
    kind: 'bars',
    stacked: false,
    counts: true,
    x: starts,
    series,
    ...(pick ? { onPick: (i: number) => pick(iso(starts[i])) } : {}),
  });
}
