/**
 * The monitoring assets shipped in monitoring/ (a Grafana dashboard and Prometheus alert rules) as
 * the suites check them: every PromQL expression they hold, and every series name those read.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '../../..');
export const DASHBOARD_PATH = resolve(ROOT, 'monitoring/grafana/tally-dashboard.json');
export const RULES_PATH = resolve(ROOT, 'monitoring/prometheus/tally-alerts.rules.yml');
export const RULES_TEST_PATH = resolve(ROOT, 'monitoring/prometheus/tally-alerts.test.yml');

export interface DashboardPanel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly datasource?: { uid: string };
  readonly targets?: { expr: string; datasource?: { uid: string } }[];
}

export interface Dashboard {
  readonly uid: string;
  readonly panels: DashboardPanel[];
  readonly templating: { list: { name: string; query?: { query: string } | string }[] };
  readonly annotations: { list: { expr?: string }[] };
}

export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await readFile(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

/**
 * The dashboard's queries as plain PromQL: Grafana's variables replaced by values a query would
 * see (`$__rate_interval` → 5m, `$instance`, `$relay_instance`… → `.*`), so promtool can parse them.
 */
export async function dashboardQueries(): Promise<string[]> {
  const dashboard = await readDashboard();
  const raw = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...dashboard.annotations.list.flatMap((a) => (a.expr === undefined ? [] : [a.expr])),
  ];
  return raw.map((expr) =>
    expr
      .replaceAll('$__rate_interval', '5m')
      .replace(/\$(instance|relay_instance|projector_instance)\b/g, '.*'),
  );
}

export async function alertExpressions(): Promise<string[]> {
  const rules = parse(await readFile(RULES_PATH, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

/** Histogram series names end in these; the family a scrape declares is the name without them. */
const HISTOGRAM_PARTS = /_(bucket|sum|count)$/;

/** Every metric family a PromQL expression reads (`tally_*`, and Node's `process_*` / `nodejs_*`). */
export function metricFamilies(expressions: readonly string[]): string[] {
  const names = new Set<string>();
  for (const expr of expressions) {
    for (const [name] of expr.matchAll(/\b(?:tally|process|nodejs)_[a-z0-9_]+\b/g)) {
      names.add(name.replace(HISTOGRAM_PARTS, ''));
    }
  }
  return [...names].sort();
}
