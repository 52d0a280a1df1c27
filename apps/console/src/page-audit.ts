import { api, qs } from './api.js';
import { categoryChart } from './chart.js';
import { errorBox, field, h, table } from './dom.js';
import { iso } from './format.js';
import { go, type Page } from './page.js';

interface AuditEntry {
  time: string;
  type: string;
  policy?: string;
  reason?: string;
  count: number;
  selectors: Record<string, string>;
  override?: {
    action: 'set' | 'remove';
    key: string;
    version: number;
    set_by: string;
    before?: { limits: Record<string, number> };
    after?: { limits: Record<string, number> };
  };
}

/** An override row's change in one line: `set key v3 by ops: hourly 100 → 500`. */
function changeOf(e: AuditEntry): string {
  // A reload's API `reason` is the policy-set version it brought: a change, not a reason.
  if (e.type === 'policy_reload') return `policy set version ${e.reason ?? '?'}`;
  const o = e.override;
  if (o === undefined) return '';
  const limits = (l?: { limits: Record<string, number> }) =>
    l === undefined
      ? 'none'
      : Object.entries(l.limits)
          .map(([w, n]) => `${w}=${n}`)
          .join(',');
  return `${o.action} ${o.key} v${o.version} by ${o.set_by}: ${limits(o.before)} → ${limits(o.after)}`;
}

const TYPES = ['denied', 'degraded', 'would_deny', 'policy_reload', 'override'] as const;
/** Pages read at most: the trail of a busy day is long; the filters narrow the range first. */
const MAX_PAGES = 10;

/**
 * `/v1/audit` by tenant and `since` (what the API filters), then by type, policy and `until` here,
 * over the entries read. Denials with their reasons and counts, degraded, would-deny, reloads, and
 * override changes (who, why, the limits before and after).
 */
export const auditPage: Page = async (root, session, params) => {
  const tenant = params.get('tenant') ?? session.tenants?.[0] ?? '';
  const type = params.get('type') ?? '';
  const policy = params.get('policy') ?? '';
  const since = params.get('since') ?? iso(Date.now() - 3_600_000);
  const until = params.get('until') ?? '';
  const tenantField =
    session.tenants === null
      ? h('input', { name: 'tenant', value: tenant, autocomplete: 'off', placeholder: '(tenant-less trail)' })
      : h(
          'select',
          { name: 'tenant' },
          session.tenants.map((t) => h('option', { value: t, selected: t === tenant }, t)),
        );
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Audit filters' },
    field('Tenant', tenantField),
    field(
      'Type',
      h(
        'select',
        { name: 'type' },
        h('option', { value: '' }, 'any'),
        TYPES.map((t) => h('option', { value: t, selected: t === type }, t)),
      ),
    ),
    field('Policy', h('input', { name: 'policy', value: policy, autocomplete: 'off' })),
    field('Since (UTC)', h('input', { name: 'since', value: since, size: 21 })),
    field('Until (UTC)', h('input', { name: 'until', value: until, size: 21, placeholder: 'now' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const value = (n: string) => (f.get(n) as string | null)?.trim() ?? '';
    go('audit', {
      tenant: value('tenant'),
      type: value('type'),
      policy: value('policy'),
      since: value('since'),
      until: value('until'),
    });
  });
  root.replaceChildren(h('h1', {}, 'Audit trail'), form);
  try {
    const entries: AuditEntry[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await api<{ entries: AuditEntry[]; next_cursor: string | null }>(
        'query',
        `/v1/audit?${qs({ tenant, since, cursor, limit: '1000' })}`,
      );
      entries.push(...res.entries);
      if (res.next_cursor === null) break;
      cursor = res.next_cursor;
    }
    const untilMs = until ? Date.parse(until) : Infinity;
    const shown = entries.filter(
      (e) => (!type || e.type === type) && (!policy || e.policy === policy) && Date.parse(e.time) < untilMs,
    );
    const byReason = new Map<string, number>();
    for (const e of shown)
      if (e.type === 'denied') byReason.set(e.reason ?? '?', (byReason.get(e.reason ?? '?') ?? 0) + e.count);
    root.append(
      h(
        'section',
        { class: 'card', 'aria-label': 'Denials by reason' },
        h('h2', {}, 'Denials by reason'),
        byReason.size === 0
          ? h('p', { class: 'note' }, 'No denials among the entries read.')
          : categoryChart({
              title: 'Denied decisions by reason',
              categoryName: 'reason',
              unit: 'decisions',
              categories: [...byReason.keys()],
              series: [{ label: 'denied', values: [...byReason.values()] }],
            }),
        table(
          'Denials by reason',
          ['reason', 'denied'],
          [...byReason].map(([r, n]) => [r, n]),
          { numeric: [1], testId: 'denials-by-reason' },
        ),
      ),
      table(
        `${shown.length} entries (GET /v1/audit, filtered here by type, policy and until)`,
        ['time', 'type', 'policy', 'reason', 'count', 'selectors', 'change'],
        shown.map((e) => [
          e.time,
          e.type,
          e.policy ?? '',
          e.type === 'policy_reload' ? '' : (e.reason ?? ''),
          e.count,
          Object.entries(e.selectors)
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
          changeOf(e),
        ]),
        { numeric: [4], testId: 'audit-table' },
      ),
    );
  } catch (error) {
    root.append(errorBox(error));
  }
};
