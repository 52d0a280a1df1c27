/**
 * The monitoring assets in monitoring/ are checked by Prometheus's own tool (promtool, Debian's
 * `prometheus` package, installed when missing): the alert rules parse and pass their unit tests
 * (tally-alerts.test.yml: each alert fires on its failure and stays silent when healthy), and every
 * query of the Grafana dashboard is valid PromQL. That they read only series the apps really export
 * is checked against live scrapes in test/e2e/extreme-cost.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ensureTool } from '@tally/testing';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alertExpressions,
  dashboardQueries,
  readDashboard,
  RULES_PATH,
  RULES_TEST_PATH,
} from '../e2e/support/monitoring-assets';

const run = promisify(execFile);
let promtool: string;
let scratch: string;

async function promtoolRun(args: string[], cwd?: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(promtool, args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

beforeAll(async () => {
  promtool = await ensureTool('promtool', 'prometheus');
  scratch = await mkdtemp(join(tmpdir(), 'tally-monitoring-'));
}, 15 * 60_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('Prometheus alert rules', () => {
  it('pass `promtool check rules` (every expression, label and template)', async () => {
    const result = await promtoolRun(['check', 'rules', RULES_PATH]);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
    expect(result.output).toMatch(/SUCCESS: 12 rules found/);
  });

  it('pass their unit tests: each alert fires on its failure and not on a healthy deployment', async () => {
    const result = await promtoolRun(['test', 'rules', RULES_TEST_PATH], dirname(RULES_TEST_PATH));
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  it('are unit-tested with their firing case: every alert appears with expected alerts in the test file', async () => {
    const rules = parse(await readFile(RULES_PATH, 'utf8')) as { groups: { rules: { alert: string }[] }[] };
    const tests = parse(await readFile(RULES_TEST_PATH, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((t) =>
        t.alert_rule_test.filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname),
      ),
    );
    const names = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(names.filter((n) => !fired.has(n))).toEqual([]);
  });

  it('a broken rule is refused by the same check (the check can fail)', async () => {
    const broken = join(scratch, 'broken.rules.yml');
    await writeFile(
      broken,
      stringify({ groups: [{ name: 'x', rules: [{ alert: 'X', expr: 'sum by (a (up)' }] }] }),
    );
    const result = await promtoolRun(['check', 'rules', broken]);
    expect(result.code).not.toBe(0);
  });
});

describe('Grafana dashboard', () => {
  it('is valid PromQL in every panel and annotation (parsed by promtool as recording rules)', async () => {
    const queries = await dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(30);
    const file = join(scratch, 'dashboard-queries.rules.yml');
    const rules = queries.map((expr, i) => ({ record: `tally:dashboard_query:${i}`, expr }));
    await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    const result = await promtoolRun(['check', 'rules', file]);
    expect(result.output).toContain(`SUCCESS: ${queries.length} rules found`);
  });

  it('has unique panel ids, a templated data source on every query, and no overlapping panels', async () => {
    const dashboard = await readDashboard();
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid, panel.title).toBe('${datasource}');
    }
    const cells = new Map<string, string>();
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let cx = x; cx < x + w; cx++) {
        for (let cy = y; cy < y + h; cy++) {
          const key = `${cx},${cy}`;
          expect(cells.get(key), `${panel.title} overlaps`).toBeUndefined();
          cells.set(key, panel.title);
        }
      }
    }
  });

  it("filters each app's panels by that app's own instance variable, and the every-app panels by none", async () => {
    const dashboard = await readDashboard();
    const variables = new Map(
      dashboard.templating.list.map((v) => [v.name, typeof v.query === 'string' ? v.query : v.query?.query]),
    );
    const own: Record<string, string> = {
      'decision-api': 'instance',
      relay: 'relay_instance',
      projector: 'projector_instance',
    };
    // Each variable lists the instances of its own app (picking a decision-API instance empties no relay panel).
    for (const [app, name] of Object.entries(own)) expect(variables.get(name)).toContain(`app="${app}"`);
    for (const panel of dashboard.panels)
      for (const { expr } of panel.targets ?? []) {
        const apps = [...expr.matchAll(/app="([^"]+)"/g)].map((m) => m[1]);
        const used = [...expr.matchAll(/\$(\w*instance)\b/g)].map((m) => m[1]);
        if (apps.length === 0) expect(used, `${panel.title}: ${expr}`).toEqual([]);
        else
          for (const name of used)
            expect(
              apps.map((a) => own[a]),
              `${panel.title}: ${expr}`,
            ).toContain(name);
      }
  });

  it('covers what operators watch: decisions, denials, degraded, breaker, outbox, lag, reloads, dead letters', async () => {
    const text = [...(await dashboardQueries()), ...(await alertExpressions())].join('\n');
    for (const needle of [
      'outcome="denied"',
      'outcome="degraded"',
      'tally_breaker_state',
      'tally_outbox_oldest_age_seconds',
      'tally_projector_lag_events',
      'outcome="rejected"',
      'tally_relay_dead_lettered_total',
      'tally_projector_events_dead_lettered_total',
    ]) {
      expect(text).toContain(needle);
    }
  });
});
