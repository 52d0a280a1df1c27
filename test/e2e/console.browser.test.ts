/**
 * The operator console in a real browser: Debian's headless chromium (installed by
 * `docker/local/stack.sh tool chromium chromium` when missing) driven by playwright-core, against the built
 * decision-api, relay and projector as child processes on a PRIVATE stack (redis-server + KRaft broker
 * of this suite alone), with real traffic sent through the decision API. Every page is checked against
 * what its API answers for the same range, the drill-downs and filters are followed, the policy preview
 * shows the simulate result, a namespace switch needs its typed confirmation, and a tenant-scoped token
 * sees only its pages. Overrides are listed, set and (after a confirmation) removed through the
 * decision API, which the projector reaches with the caller's token. The operator signs in with one
 * `console` token. Every chart's numbers (uPlot, read from the chart's `data-chart`) equal what the
 * API answers for the same range. Each page is screenshotted into .local/artifacts/console/
 * (git-ignored) at 1280 and 375 px, scanned with axe-core at both (no serious or critical violation),
 * never scrolls sideways, fetches nothing from another host, and the browser console stays free of errors.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { OverrideList } from '@tally/api-contract';
import { tokenDigestHex } from '@tally/auth';
import { createLedger, TOPICS, type Ledger } from '@tally/ledger';
import { buildTree, ensureTool, eventually, uniqueName } from '@tally/testing';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppProcess, CALLER_TOKEN, type AppEnv } from './support/ledger-apps.harness';
import { PrivateStack } from './support/ledger-stack.harness';

const exec = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const run = uniqueName('console');
const out = resolve(ROOT, '.local', run);
const ARTIFACTS = resolve(ROOT, '.local/artifacts/console');

const POLICY = 'per-principal';
const SHADOW = 'tenant-shadow';
const ACME = 'acme';
const GLOBEX = 'globex';
/** 4 per principal per minute: the traffic below is denied past that, within one minute's burst. */
const POLICIES = `
policies:
  - name: ${POLICY}
    key: [tenant, principal]
    windows:
      - { name: minute, role: burst, algorithm: fixed_window, limit: 4, period: 1m }
  - name: ${SHADOW}
    key: [tenant]
    mode: shadow
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 8, period: 1h }
`;
/** The proposal previewed: the same policy at 2 per minute (more denials), the shadow one removed. */
const PROPOSED = `
policies:
  - name: ${POLICY}
    key: [tenant, principal]
    windows:
      - { name: minute, role: burst, algorithm: fixed_window, limit: 2, period: 1m }
`;

/** The API checks read with a query and an admin token; the operator signs in with one console token. */
const READER_TOKEN = `console-reader-token-${run}`;
const OPS_TOKEN = `ops-admin-token-${run}`;
const CONSOLE_TOKEN = `console-ops-token-${run}`;
const ACME_TOKEN = `console-acme-token-${run}`;
const OVERRIDES_READER_TOKEN = `console-overrides-reader-token-${run}`;
const TOKENS = `tokens:
  - { name: console-reader, sha256: ${tokenDigestHex(READER_TOKEN)}, roles: [query] }
  - { name: ops-admin, sha256: ${tokenDigestHex(OPS_TOKEN)}, roles: [admin] }
  - { name: console-ops, sha256: ${tokenDigestHex(CONSOLE_TOKEN)}, roles: [console] }
  - { name: acme-reader, sha256: ${tokenDigestHex(ACME_TOKEN)}, roles: [query], tenants: [${ACME}] }
  - { name: overrides-reader, sha256: ${tokenDigestHex(OVERRIDES_READER_TOKEN)}, roles: ['overrides:read'] }
`;

const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const WAIT = { timeoutMs: 90_000, intervalMs: 250 } as const;

let stack: PrivateStack;
let env: AppEnv;
let api: AppProcess;
let relay: AppProcess;
let projector: AppProcess;
let ledger: Ledger;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const browserErrors: string[] = [];
/** Every URL the browser asked for that is not the projector's: must stay empty (no CDN, no font host). */
const foreignRequests: string[] = [];
/** Refusals a step provokes on purpose (the invalid proposal), which the browser logs as failed loads. */
const expectedFailures: RegExp[] = [];
const sent = { allowed: 0, denied: 0 };
const started: AppProcess[] = [];

async function projectorGet<T>(
  path: string,
  token = path.startsWith('/v1/usage') || path.startsWith('/v1/top-keys') || path.startsWith('/v1/audit')
    ? READER_TOKEN
    : OPS_TOKEN,
): Promise<T> {
  const res = await fetch(`${projector.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function post(
  path: string,
  body: unknown,
  token = OPS_TOKEN,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${projector.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function decide(tenant: string, principal: string): Promise<number> {
  const res = await fetch(`${api.baseUrl}/v1/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CALLER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ selectors: { tenant, principal }, cost: 1 }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Real traffic: each principal asks 6 times, the burst window of 4 denies the last 2. */
async function traffic(): Promise<void> {
  for (const tenant of [ACME, GLOBEX])
    for (const principal of ['svc-1', 'svc-2', 'svc-3'])
      for (let i = 0; i < (principal === 'svc-1' ? 6 : 3); i++) {
        const status = await decide(tenant, principal);
        if (status === 200) sent.allowed++;
        else if (status === 429) sent.denied++;
        else throw new Error(`decision answered ${status}`);
      }
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** axe-core in the page: serious and critical violations, by rule and the nodes they hit. */
async function axe(): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  // A string: the tests compile without the DOM library; `axe` is the global the script above defined.
  const result = await page.evaluate<{
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  }>('axe.run()');
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Chart text never smaller than this (CSS px), at either width. */
const MIN_FONT_PX = 10;

/**
 * Screenshot and scan at both widths (a phone, then a desktop): no serious or critical axe violation,
 * no sideways scroll of the page, every chart as wide as its card and its axis labels ≥ 10 px.
 */
async function checkLayout(name: string): Promise<void> {
  for (const viewport of [PHONE, WIDE]) {
    await page.setViewportSize(viewport);
    // The charts follow their container (a ResizeObserver): wait until each one fits it again.
    await expect
      .poll(() =>
        page.evaluate(
          `[...document.querySelectorAll('.plot')].every((p) => Math.abs(p.querySelector('.uplot').offsetWidth - p.clientWidth) <= 1)`,
        ),
      )
      .toBe(true);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    // uPlot draws axis text on the canvas with the font it was given: check what it holds.
    const fonts = await page.evaluate<number[]>(
      `[...document.querySelectorAll('.plot canvas')].map((c) => parseFloat(c.getContext('2d').font))`,
    );
    for (const px of fonts) expect(px).toBeGreaterThanOrEqual(MIN_FONT_PX);
    await screenshot(`${name}-${viewport.width}`);
    expect(await axe()).toEqual([]);
  }
}

interface ChartData {
  title: string;
  x: (number | string)[];
  series: { label: string; values: number[] }[];
}

/** The numbers a chart draws, as it keeps them (`data-chart`), by the start of its title. */
async function chart(title: string): Promise<ChartData> {
  const all = await page
    .locator('figure[data-chart]')
    .evaluateAll((figures) =>
      figures.map((f) => (f as unknown as { dataset: { chart: string } }).dataset.chart),
    );
  const found = all.map((json) => JSON.parse(json) as ChartData).find((c) => c.title.startsWith(title));
  if (found === undefined) throw new Error(`no chart titled ${title}…`);
  return found;
}

/** A series' value at `x` on a chart (0 where it has no such x: a chart draws no gap). */
function valueAt(data: ChartData, label: string, x: number | string): number | undefined {
  const i = data.x.indexOf(x);
  return i < 0 ? undefined : (data.series.find((s) => s.label === label)?.values[i] ?? 0);
}

async function open(hash: string, ready: string): Promise<void> {
  await page.goto(`${projector.baseUrl}/console#/${hash}`);
  await page.locator(ready).first().waitFor({ timeout: 30_000 });
}

/** `open` from another page of the same path: a hash change alone would race the old page's table. */
async function reopen(hash: string, ready: string): Promise<void> {
  await page.goto('about:blank');
  await open(hash, ready);
}

const rows = (testId: string) => page.locator(`[data-testid="${testId}"] tbody tr`);
/** The cells of a table's body rows, trimmed (the DOM is read through locators: no DOM types here). */
async function cellTexts(testId: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const row of await rows(testId).all())
    out.push((await row.locator('td').allTextContents()).map((t) => t.trim()));
  return out;
}

beforeAll(async () => {
  const chromiumPath = await ensureTool('chromium', 'chromium');
  await mkdir(ARTIFACTS, { recursive: true });
  await mkdir(out, { recursive: true });
  [stack] = await Promise.all([
    PrivateStack.up(),
    buildTree(out, ['decision-api', 'relay', 'projector', 'cli']),
  ]);
  const policiesPath = join(out, 'policies.yaml');
  const tokensPath = join(out, 'tokens.yaml');
  await writeFile(policiesPath, POLICIES);
  await writeFile(tokensPath, TOKENS);
  env = {
    out,
    redisUrl: stack.redisUrl,
    brokers: stack.brokers,
    policiesPath,
    extraEnv: { TALLY_TOKENS_FILE: tokensPath },
  };
  api = await AppProcess.start('decision-api', env);
  started.push(api);
  relay = await AppProcess.start('relay', env);
  started.push(relay);
  projector = await AppProcess.start('projector', {
    ...env,
    extraEnv: {
      ...env.extraEnv,
      TALLY_CONSOLE_DECISION_API_URL: api.baseUrl,
      TALLY_CONSOLE_RELAY_URL: relay.baseUrl,
      TALLY_CONSOLE_SAMPLE_INTERVAL: '1s',
    },
  });
  started.push(projector);
  ledger = createLedger({ brokers: [...stack.brokers], clientId: run, logLevel: 'nothing' });
  await ledger.producer.connect();

  await traffic();
  // A record the projector cannot read: it is dead-lettered with its reason (the Ledger page lists it).
  await ledger.producer.send(TOPICS.usage, [{ key: ACME, value: '{"not":"an event"}' }]);
  // Everything folded: the projector's usage equals what the decision API allowed.
  await eventually(
    async () => {
      const [a, g] = await Promise.all(
        [ACME, GLOBEX].map((t) =>
          projectorGet<{ total: { count: number } }>(
            `/v1/usage?tenant=${t}&granularity=hour&from=${hourAgo()}`,
          ),
        ),
      );
      return a.total.count + g.total.count;
    },
    (n) => n === sent.allowed,
    { ...WAIT, what: 'the projector to fold every allowed decision' },
  );

  browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  // bypassCSP: axe-core is injected as an inline script, which the console's own policy forbids.
  context = await browser.newContext({ viewport: WIDE, bypassCSP: true });
  page = await context.newPage();
  page.on('pageerror', (e) => browserErrors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(projector.baseUrl) && !/^(data|about|blob):/.test(url)) foreignRequests.push(url);
  });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location().url;
    if (!expectedFailures.some((re) => re.test(where))) browserErrors.push(`${m.text()} (${where})`);
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await ledger?.close();
  await Promise.all(started.map((app) => app.kill('SIGTERM')));
  await stack?.down();
  await rm(out, { recursive: true, force: true });
});

/** The decision API itself (not the projector's forward), as the truth the page is checked against. */
async function decisionApi(
  method: string,
  path: string,
  body?: unknown,
  token = OPS_TOKEN,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** The rows an override page shows, as the table's first nine cells (none: the empty-page row is left out). */
async function shownOverrides(): Promise<string[][]> {
  return (await cellTexts('overrides-table')).filter((r) => r.length > 1).map((r) => r.slice(0, 9));
}

function overrideRows(page: OverrideList): string[][] {
  return page.items.map((o) => [
    o.policy,
    o.key,
    o.tenant ?? '—',
    Object.keys(o.limits)
      .sort()
      .map((w) => `${w}=${o.limits[w]}`)
      .join(', '),
    o.expires_at ?? 'until removed',
    o.reason,
    o.set_by,
    String(o.version),
    o.updated_at,
  ]);
}

function hourAgo(): string {
  return new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

describe('operator console', { timeout: 180_000 }, () => {
  it('signs in with one console token and lists every page', async () => {
    expect(sent.denied).toBeGreaterThan(0);
    await page.goto(`${projector.baseUrl}/console`);
    expectedFailures.push(/\/v1\/session$/);
    await page.getByLabel('Token', { exact: true }).fill('not-a-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not accepted');
    await page.getByLabel('Token', { exact: true }).fill(CONSOLE_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('main[data-page="overview"]').waitFor();
    expectedFailures.pop();

    const links = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(links).toEqual([
      'Overview',
      'Usage',
      'Audit trail',
      'Ledger and consumers',
      'Policies',
      'Namespaces',
      'Overrides',
    ]);
    expect(await page.evaluate('sessionStorage.getItem("tally.console.tokens")')).toBe(
      JSON.stringify([CONSOLE_TOKEN]),
    );
  });

  it('Overview: the series and the health the overview API answers, refreshed live', async () => {
    // Samples are taken every second: wait until they cover the traffic (a rate > 0 was seen).
    await eventually(
      () => projectorGet<{ policies: { label: string; points: number[][] }[] }>('/v1/overview'),
      (o) => o.policies.some((s) => s.label === `allowed · ${POLICY}` && s.points.some((p) => p[1] > 0)),
      { ...WAIT, what: 'a sample with the traffic' },
    );
    await open('overview', '[data-testid="decisions-table"] tbody tr');
    type Series = { label: string; points: [number, number][] };
    const drawn = {
      decisions: await chart('Decisions per second by outcome'),
      policies: await chart('Policies per second by what each said'),
      denials: await chart('Denials per second by reason'),
    };
    const overview = await projectorGet<{
      decisions: Series[];
      policies: Series[];
      denials: Series[];
      degraded: Series[];
      health: Record<string, { status: string }>;
    }>('/v1/overview');
    // Each chart: the API's series, each of its samples up to the chart's last one at the same value
    // (the API was asked after the page: it may have newer samples, never other numbers).
    for (const key of ['decisions', 'policies', 'denials'] as const) {
      const data = drawn[key];
      expect(data.series.map((x) => x.label)).toEqual(overview[key].map((x) => x.label));
      const last = Number(data.x[data.x.length - 1]);
      for (const line of overview[key])
        for (const [t, v] of line.points.filter(([t]) => t <= last))
          expect(valueAt(data, line.label, t)).toBe(v);
    }
    // No degraded decision: said so, not "no samples".
    expect(overview.degraded).toEqual([]);
    expect(await page.getByTestId('degraded-table-none').textContent()).toMatch(
      /^No degraded decisions in the \d+ samples/,
    );

    // Each decision once, by outcome; what each policy said apart (the shadow policy never denies).
    const shown = (await cellTexts('decisions-table')).map((r) => r[0]);
    expect(shown).toEqual(overview.decisions.map((s) => s.label));
    expect(shown).toEqual(['allowed', 'denied']);
    const policies = (await cellTexts('policies-table')).map((r) => r[0]);
    expect(policies).toEqual(overview.policies.map((s) => s.label));
    expect(policies).toEqual(
      expect.arrayContaining([
        `allowed · ${POLICY}`,
        `denied · ${POLICY}`,
        `allowed · ${SHADOW}`,
        `would_deny · ${SHADOW}`,
      ]),
    );
    expect(policies).not.toContain(`denied · ${SHADOW}`);
    expect((await cellTexts('denials-table')).map((r) => r[0])).toEqual(overview.denials.map((s) => s.label));
    expect(overview.denials.map((s) => s.label)).toEqual(['burst_quota_exhausted']);
    for (const service of ['projector', 'decision-api', 'relay']) {
      expect(overview.health[service].status).toBe('healthy');
      await expect
        .poll(() => page.locator(`[data-service="${service}"] .badge`).first().textContent())
        .toBe('healthy');
    }
    // Live: the chart's last sample time moves on without any navigation.
    const endOfChart = async () => (await chart('Decisions per second by outcome')).x.at(-1);
    const before = await endOfChart();
    await expect.poll(endOfChart, { timeout: 30_000 }).not.toBe(before);
    await checkLayout('overview');
  });

  it('Usage: buckets and totals equal /v1/usage; a bucket drills into /v1/top-keys, a key into its usage', async () => {
    const from = hourAgo();
    const to = new Date(Date.now() + 120_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const query = `tenant=${ACME}&granularity=minute&from=${from}&to=${to}`;
    await open(`usage?${query}`, '[data-testid="usage-table"]');
    const usage = await projectorGet<{
      buckets: { start: string; policy: string; cost: number; count: number }[];
      total: { cost: number };
    }>(`/v1/usage?${query}&limit=5000`);
    expect(await page.getByTestId('total-cost').textContent()).toBe(String(usage.total.cost));
    expect(usage.total.cost).toBe(4 + 3 + 3);
    expect((await cellTexts('usage-table')).map((r) => [r[0], r[2], r[3]])).toEqual(
      usage.buckets.map((b) => [b.start, String(b.cost), String(b.count)]),
    );
    // The chart: every minute of the range on a time axis (empty ones 0), a series per policy (side
    // by side: a decision counts under every policy that applied, so they do not sum to the total).
    const drawn = await chart('Cost per minute by policy');
    const minutes = Math.ceil((Date.parse(to) - Math.floor(Date.parse(from) / 60_000) * 60_000) / 60_000);
    expect(drawn.x).toHaveLength(minutes);
    const byPolicy = usage.buckets;
    expect(drawn.series.map((x) => x.label)).toEqual([...new Set(byPolicy.map((b) => b.policy))].sort());
    for (const b of byPolicy) expect(valueAt(drawn, b.policy, Date.parse(b.start))).toBe(b.cost);
    // Nothing else drawn: each series' sum is its buckets' sum (every other minute is 0).
    for (const line of drawn.series)
      expect(line.values.reduce((a, b) => a + b, 0)).toBe(
        byPolicy.filter((b) => b.policy === line.label).reduce((a, b) => a + b.cost, 0),
      );
    await checkLayout('usage');

    // Drill down: name the policy with the filter form, then open the top keys of the busiest bucket.
    await page.getByLabel('Policy', { exact: true }).fill(POLICY);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/policy=per-principal/);
    const busiest = usage.buckets.reduce((a, b) => (b.cost > a.cost ? b : a));
    await page
      .locator('[data-testid="usage-table"] tr', { hasText: busiest.start })
      .getByRole('button', { name: 'top keys' })
      .click();
    await page.locator('[data-testid="top-keys-table"]').waitFor();
    const top = await projectorGet<{ keys: { key: string; cost: number }[] }>(
      `/v1/top-keys?tenant=${ACME}&policy=${POLICY}&granularity=minute&at=${busiest.start}&limit=20`,
    );
    expect((await cellTexts('top-keys-table')).map((r) => [r[0], r[1]])).toEqual(
      top.keys.map((k) => [k.key, String(k.cost)]),
    );
    const keysChart = await chart('Cost per key');
    expect(keysChart.x).toEqual(top.keys.map((k) => k.key));
    expect(keysChart.series).toEqual([{ label: 'cost', values: top.keys.map((k) => k.cost) }]);
    await checkLayout('usage-top-keys');

    const key = top.keys[0].key;
    await page.getByRole('link', { name: key, exact: true }).click();
    await page.waitForURL(/key=/);
    await page.locator('[data-testid="usage-table"]').waitFor();
    const byKey = await projectorGet<{ total: { cost: number } }>(
      `/v1/usage?${query}&policy=${POLICY}&key=${encodeURIComponent(key)}`,
    );
    await expect.poll(() => page.getByTestId('total-cost').textContent()).toBe(String(byKey.total.cost));
    expect(await page.getByRole('navigation', { name: 'Drill-down' }).textContent()).toContain(`key ${key}`);
    await screenshot('usage-key');
  });

  it('Audit trail: denials by type and policy, with reasons and counts as /v1/audit answers', async () => {
    const since = hourAgo();
    await open(
      `audit?tenant=${ACME}&type=denied&policy=${POLICY}&since=${since}`,
      '[data-testid="audit-table"]',
    );
    const audit = await projectorGet<{
      entries: { type: string; policy?: string; reason?: string; count: number }[];
    }>(`/v1/audit?tenant=${ACME}&since=${since}&limit=1000`);
    const denied = audit.entries.filter((e) => e.type === 'denied' && e.policy === POLICY);
    const table = await cellTexts('audit-table');
    expect(table.map((r) => [r[1], r[2], r[3], r[4]])).toEqual(
      denied.map((e) => ['denied', POLICY, e.reason ?? '', String(e.count)]),
    );
    // The 2 denials of acme's svc-1 (coalesced per second, so in one or two rows).
    expect(denied.reduce((n, e) => n + e.count, 0)).toBe(2);
    expect(await cellTexts('denials-by-reason')).toEqual([['burst_quota_exhausted', '2']]);
    expect(await chart('Denied decisions by reason')).toMatchObject({
      x: ['burst_quota_exhausted'],
      series: [{ label: 'denied', values: [2] }],
    });

    // Another type through the form: the shadow policy's would-deny rows only.
    await page.getByLabel('Type', { exact: true }).selectOption('would_deny');
    await page.getByLabel('Policy', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/type=would_deny/);
    await page.locator('[data-testid="audit-table"]').waitFor();
    // acme's 10 allowed decisions pass the shadow policy's 8 per hour: the last 2 would have been denied.
    const wouldDeny = audit.entries.filter((e) => e.type === 'would_deny');
    expect(wouldDeny.reduce((n, e) => n + e.count, 0)).toBe(2);
    // Polled: the table of the previous filter stays until the new answer replaces it.
    await expect
      .poll(async () => (await cellTexts('audit-table')).map((r) => [r[1], r[2], r[4]]))
      .toEqual(wouldDeny.map((e) => ['would_deny', e.policy, String(e.count)]));
    await checkLayout('audit');

    // A policy reload (the tenant-less trail): no reason (it has none), the version it brought as its change.
    const global = await projectorGet<{ entries: { type: string; reason?: string }[] }>(
      `/v1/audit?since=${since}&limit=1000`,
    );
    const reloads = global.entries.filter((e) => e.type === 'policy_reload');
    expect(reloads.length).toBeGreaterThan(0);
    await reopen(`audit?type=policy_reload&since=${since}`, '[data-testid="audit-table"]');
    expect((await cellTexts('audit-table')).map((r) => [r[1], r[3], r[6]])).toEqual(
      reloads.map((e) => ['policy_reload', '', `policy set version ${e.reason}`]),
    );
  });

  it('Ledger and consumers: outbox, group members, lag per partition and the dead letter with its reason', async () => {
    await eventually(
      () => projectorGet<{ dead_letters: unknown[]; outbox: unknown }>('/v1/pipeline'),
      (p) => p.dead_letters.length === 1 && p.outbox !== null,
      { ...WAIT, what: 'the dead letter and an outbox sample' },
    );
    await open('pipeline', '[data-testid="partitions-table"]');
    const pipeline = await projectorGet<{
      consumers: {
        members: unknown[];
        partitions: { topic: string; partition: number; lag: number; storedLag: number | null }[];
      };
      dead_letters: { reason: string; source: string; origin: string | null }[];
    }>('/v1/pipeline');
    expect(await rows('members-table').count()).toBe(pipeline.consumers.members.length);
    expect(pipeline.consumers.members).toHaveLength(1);
    expect((await cellTexts('partitions-table')).map((r) => `${r[0]}/${r[1]}`)).toEqual(
      pipeline.consumers.partitions.map((p) => `${p.topic}/${p.partition}`),
    );
    const letters = await cellTexts('dead-letters-table');
    expect(letters.map((r) => [r[1], r[2], r[3]])).toEqual(
      pipeline.dead_letters.map((d) => [d.source, d.reason, d.origin]),
    );
    expect(letters[0][1]).toBe('projector');
    // Where the refused record was read, not where its dead letter lies.
    expect(pipeline.dead_letters[0].origin).toMatch(
      new RegExp(`^${TOPICS.usage.replace(/\./g, '\\.')}/\\d+ @\\d+$`),
    );
    // Lag per partition: as the API answers; all caught up is said, not drawn as an empty axis.
    const lags = pipeline.consumers.partitions.map((p) => p.storedLag ?? p.lag);
    if (lags.every((n) => n === 0))
      expect(await page.getByTestId('lag-none').textContent()).toContain(
        `${lags.length} partitions has lag 0`,
      );
    else
      expect((await chart('Projector lag per partition')).series).toEqual([{ label: 'lag', values: lags }]);
    await expect.poll(() => page.getByTestId('outbox').textContent()).toContain('Entries');
    await checkLayout('pipeline');
  });

  it('Policies: the running set, a rejected reload with its errors, and a proposal previewed with simulate', async () => {
    // A broken file is refused by the decision API (and remembered), then the good one is back.
    await writeFile(env.policiesPath, 'policies: [ { name: broken } ]\n');
    const refused = await fetch(`${api.baseUrl}/v1/policies:reload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
    });
    expect(refused.status).toBe(422);
    await writeFile(env.policiesPath, POLICIES);

    await open('policies', '[data-testid="reloads-table"]');
    const running = (await (
      await fetch(`${api.baseUrl}/v1/policies`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    ).json()) as { version: string };
    expect(await page.getByTestId('policy-version').textContent()).toBe(running.version);
    expect((await cellTexts('policies-table')).map((r) => r[0])).toEqual([POLICY, SHADOW]);
    const reloads = await cellTexts('reloads-table');
    expect(reloads.some((r) => r[2] === 'rejected' && r[4].includes('policies[0]'))).toBe(true);

    // More than a day of decisions in memory is refused before anything is read.
    const tooLong = await post('/v1/policies:simulate', {
      policies: PROPOSED,
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-02T00:00:01Z',
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors).toEqual([
      { path: 'to', message: 'must be an ISO 8601 time after `from`, at most 24 h later' },
    ]);

    // An invalid proposal: every error listed, nothing simulated.
    expectedFailures.push(/\/v1\/policies:simulate$/);
    await page.getByLabel('Policy file (YAML or JSON)', { exact: true }).fill('policies: [ { name: nope } ]');
    await page.getByRole('button', { name: 'Validate and preview' }).click();
    await page.getByTestId('proposal-errors').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('simulate.policy_invalid');

    // A valid one over the traffic's range: the page shows what POST /v1/policies:simulate answers.
    const from = hourAgo();
    const to = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await page.getByLabel('Policy file (YAML or JSON)', { exact: true }).fill(PROPOSED);
    await page.getByLabel('From (UTC)', { exact: true }).fill(from);
    await page.getByLabel('To (UTC)', { exact: true }).fill(to);
    await page.getByRole('button', { name: 'Validate and preview' }).click();
    await page.getByTestId('simulation-table').waitFor({ timeout: 60_000 });
    expectedFailures.pop();
    const res = await fetch(`${projector.baseUrl}/v1/policies:simulate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ policies: PROPOSED, from, to }),
    });
    const sim = (await res.json()) as {
      decisions: number;
      policies: {
        policy: string;
        actual: { allowed: number; denied: number };
        simulated: { allowed: number; denied: number };
      }[];
    };
    expect(sim.decisions).toBeGreaterThanOrEqual(sent.allowed);
    expect((await cellTexts('simulation-table')).map((r) => [r[0], r[2], r[3], r[4], r[5]])).toEqual(
      sim.policies.map((p) =>
        [p.policy, p.actual.allowed, p.actual.denied, p.simulated.allowed, p.simulated.denied].map(String),
      ),
    );
    expect(await chart('Denied per policy')).toEqual({
      title: 'Denied per policy: actual (filled) vs proposed (outlined)',
      x: sim.policies.map((p) => p.policy),
      series: [
        { label: 'actual denied', values: sim.policies.map((p) => p.actual.denied) },
        { label: 'proposed denied', values: sim.policies.map((p) => p.simulated.denied) },
      ],
    });
    const proposed = sim.policies.find((p) => p.policy === POLICY);
    expect(proposed?.simulated.denied).toBeGreaterThan(proposed?.actual.denied ?? Infinity);
    expect(await page.getByTestId('preview-summary').textContent()).toContain(
      `${sim.decisions} recorded decisions`,
    );
    await checkLayout('policies');
  });

  it('Overrides: pages and filters as GET /v1/overrides answers; set through the form and in force; removal confirmed', async () => {
    // Three overrides set straight on the decision API: the page must list exactly what it answers.
    for (const [key, limit] of [
      [`${ACME}:svc-2`, 10],
      [`${ACME}:svc-3`, 20],
      [`${GLOBEX}:svc-2`, 30],
    ] as const)
      expect(
        (
          await decisionApi('PUT', `/v1/overrides/${POLICY}/${key}`, {
            limits: { minute: limit },
            reason: 'launch',
          })
        ).status,
      ).toBe(201);

    // Two per page: every page the browser shows is the decision API's page for the same cursor.
    await open('overrides?limit=2', '[data-testid="overrides-table"]');
    let cursor: string | null = null;
    const seen: string[][] = [];
    do {
      const expected = (
        await decisionApi(
          'GET',
          `/v1/overrides?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        )
      ).body as OverrideList;
      if (cursor !== null) await page.getByRole('button', { name: 'Next page' }).click();
      await expect.poll(shownOverrides).toEqual(overrideRows(expected));
      seen.push(...overrideRows(expected));
      cursor = expected.next_cursor;
      if (cursor === null) expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0);
    } while (cursor !== null);
    expect(seen.map((r) => [r[1], r[3]]).sort()).toEqual([
      [`${ACME}:svc-2`, 'minute=10'],
      [`${ACME}:svc-3`, 'minute=20'],
      [`${GLOBEX}:svc-2`, 'minute=30'],
    ]);

    // Filters: the policy and a tenant, as the API answers them.
    await reopen('overrides', '[data-testid="overrides-table"]');
    await page.getByLabel('Policy', { exact: true }).fill(POLICY);
    await page.getByLabel('Tenant', { exact: true }).fill(ACME);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/tenant=acme/);
    const acmeOnly = (await decisionApi('GET', `/v1/overrides?policy=${POLICY}&tenant=${ACME}`))
      .body as OverrideList;
    expect(acmeOnly.items).toHaveLength(2);
    await expect.poll(shownOverrides).toEqual(overrideRows(acmeOnly));

    // A refusal of the decision API comes back with its code and fields (an unknown window).
    await reopen('overrides', '[data-testid="overrides-table"]');
    const blockedKey = `${GLOBEX}:svc-9`;
    expectedFailures.push(/\/v1\/decision-api\/overrides\//);
    await page.getByLabel('Override policy', { exact: true }).fill(POLICY);
    await page.getByLabel('Override key', { exact: true }).fill(blockedKey);
    await page.getByLabel('Limits (window=limit)', { exact: true }).fill('fortnight=1');
    await page.getByLabel('Reason', { exact: true }).fill('abusive client');
    await page.getByRole('button', { name: 'Set override' }).click();
    await page.getByTestId('override-errors').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('request.invalid');
    expect(await page.getByTestId('override-errors').textContent()).toContain('limits.fortnight');
    expectedFailures.pop();

    // Set a block through the form: listed, and in force for the next decision.
    await page.getByLabel('Limits (window=limit)', { exact: true }).fill('minute=0');
    await page.getByRole('button', { name: 'Set override' }).click();
    await page.getByTestId('override-notice').waitFor();
    expect(await page.getByTestId('override-notice').textContent()).toMatch(
      new RegExp(`^Set ${POLICY} for ${blockedKey}: minute=0 \\(version \\d+\\)\\.$`),
    );
    const stored = (await decisionApi('GET', `/v1/overrides/${POLICY}/${blockedKey}`))
      .body as OverrideList['items'][0];
    expect(stored).toMatchObject({ limits: { minute: 0 }, reason: 'abusive client', set_by: 'console-ops' });
    const all = (await decisionApi('GET', '/v1/overrides')).body as OverrideList;
    await expect.poll(shownOverrides).toEqual(overrideRows(all));
    expect(overrideRows(all).map((r) => r[1])).toContain(blockedKey);
    const blocked = await fetch(`${api.baseUrl}/v1/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CALLER_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ selectors: { tenant: GLOBEX, principal: 'svc-9' }, cost: 1 }),
    });
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toMatchObject({ reason: 'blocked', code: 'quota.blocked' });

    // Removal needs its confirmation: cancelled, the override stays.
    const remove = page.getByRole('button', { name: `Remove ${POLICY} ${blockedKey}…` });
    await remove.click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await decisionApi('GET', `/v1/overrides/${POLICY}/${blockedKey}`)).status).toBe(200);
    await remove.click();
    expect(await dialog.getByRole('heading').textContent()).toBe(
      `Remove the override of ${POLICY} for ${blockedKey}?`,
    );
    await screenshot('overrides-confirm');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await expect
      .poll(() => page.getByTestId('override-notice').textContent())
      .toBe(`Removed the override of ${POLICY} for ${blockedKey}.`);
    expect((await decisionApi('GET', `/v1/overrides/${POLICY}/${blockedKey}`)).status).toBe(404);
    const after = (await decisionApi('GET', '/v1/overrides')).body as OverrideList;
    await expect.poll(shownOverrides).toEqual(overrideRows(after));
    expect(await decide(GLOBEX, 'svc-9')).toBe(200);

    // The forward keeps the decision API's refusals: a removal of nothing is its 404, and the
    // projector checks the parameters with the same contract before forwarding.
    const forwarded = (method: string, path: string) =>
      fetch(`${projector.baseUrl}/v1/decision-api/overrides${path}`, {
        method,
        headers: { authorization: `Bearer ${OPS_TOKEN}` },
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code: string } }));
    expect(await forwarded('DELETE', `/${POLICY}/${blockedKey}`)).toMatchObject({
      status: 404,
      body: { code: 'override.not_found' },
    });
    expect(await forwarded('GET', '?bogus=1')).toMatchObject({
      status: 400,
      body: { code: 'request.invalid' },
    });
    await checkLayout('overrides');

    // Both changes are audit entries (tally.override.v1 through the relay and the projector): the
    // audit page shows who changed what, and the limits before and after.
    const since = hourAgo();
    type OverrideRow = {
      type: string;
      reason?: string;
      override?: { action: string; key: string; set_by: string };
    };
    const changesOf = (entries: OverrideRow[]) =>
      entries.filter((e) => e.type === 'override' && e.override?.key === blockedKey);
    const trail = await eventually(
      () => projectorGet<{ entries: OverrideRow[] }>(`/v1/audit?tenant=${GLOBEX}&since=${since}&limit=1000`),
      (a) => changesOf(a.entries).length >= 2,
      { ...WAIT, what: 'the two override changes in the audit trail' },
    );
    const changes = changesOf(trail.entries);
    expect(changes.map((e) => [e.override?.action, e.override?.set_by])).toEqual([
      ['set', 'console-ops'],
      ['remove', 'console-ops'],
    ]);
    expect(changes[0]?.reason).toBe('abusive client');
    await open(`audit?tenant=${GLOBEX}&type=override&since=${since}`, '[data-testid="audit-table"]');
    const shownChanges = (await cellTexts('audit-table')).filter(
      (r) => r[1] === 'override' && (r[6] ?? '').includes(blockedKey),
    );
    expect(shownChanges.map((r) => r[6]?.replace(/ v\d+ /, ' vN '))).toEqual([
      `set ${blockedKey} vN by console-ops: none → minute=0`,
      `remove ${blockedKey} vN by console-ops: minute=0 → none`,
    ]);
  });

  it('Namespaces: replay state listed; a switch happens only after the name is typed again', async () => {
    await exec(
      process.execPath,
      [
        join(out, 'apps/cli/src/main.js'),
        'replay',
        '--from',
        'earliest',
        '--to',
        'latest',
        '--namespace',
        'rebuilt',
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          REDIS_URL: stack.redisUrl,
          KAFKA_BROKERS: stack.brokers.join(','),
          TALLY_SHARDS: '8',
        },
      },
    );
    await open('namespaces', '[data-testid="namespaces-table"]');
    const listed = await cellTexts('namespaces-table');
    expect(listed.map((r) => [r[0], r[1], r[5]])).toEqual([
      ['live', 'active', '—'],
      ['rebuilt', 'inactive', 'complete'],
    ]);

    // The API itself refuses a switch whose confirmation differs, an unknown name, and a scoped token.
    expect(await post('/v1/namespaces:switch', { name: 'rebuilt', confirm: 'rebuil' })).toEqual({
      status: 400,
      body: {
        code: 'request.invalid',
        message: 'the request is invalid',
        errors: [{ path: 'confirm', message: 'must repeat `name` exactly' }],
      },
    });
    expect((await post('/v1/namespaces:switch', { name: 'nope', confirm: 'nope' })).body.code).toBe(
      'namespace.not_found',
    );
    expect(
      (await post('/v1/namespaces:switch', { name: 'rebuilt', confirm: 'rebuilt' }, ACME_TOKEN)).status,
    ).toBe(403);

    await page.getByRole('button', { name: 'Switch to rebuilt…' }).click();
    const dialog = page.getByRole('dialog');
    const confirm = dialog.getByRole('button', { name: 'Switch' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type rebuilt to confirm', { exact: true }).fill('rebuil');
    expect(await confirm.isDisabled()).toBe(true);
    await screenshot('namespaces-confirm');
    expect(
      await projectorGet<{ namespaces: { name: string; active: boolean }[] }>('/v1/namespaces'),
    ).toMatchObject({
      namespaces: [
        { name: 'live', active: true },
        { name: 'rebuilt', active: false },
      ],
    });
    await dialog.getByLabel('Type rebuilt to confirm', { exact: true }).fill('rebuilt');
    await confirm.click();
    await page.getByTestId('switched').waitFor();
    expect(await page.getByTestId('switched').textContent()).toBe('Switched from live to rebuilt.');
    expect((await cellTexts('namespaces-table')).map((r) => [r[0], r[1]])).toEqual([
      ['live', 'inactive'],
      ['rebuilt', 'active'],
    ]);
    await checkLayout('namespaces');
  });

  it('a tenant-scoped token sees only usage and audit, and only its tenant', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token', { exact: true }).fill(ACME_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('main[data-page="usage"]').waitFor();
    const links = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(links).toEqual(['Usage', 'Audit trail']);
    expect(await page.getByLabel('Tenant', { exact: true }).locator('option').allTextContents()).toEqual([
      ACME,
    ]);
    await page.locator('[data-testid="usage-table"]').waitFor();
    await screenshot('usage-scoped');
  });

  it('a token that may only read overrides sees their list, without set or remove', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token', { exact: true }).fill(OVERRIDES_READER_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('main[data-page="overrides"]').waitFor();
    const links = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(links).toEqual(['Overrides']);
    const listed = (await decisionApi('GET', '/v1/overrides', undefined, OVERRIDES_READER_TOKEN))
      .body as OverrideList;
    expect(listed.items).toHaveLength(3);
    await expect.poll(shownOverrides).toEqual(overrideRows(listed));
    expect(await page.getByRole('form', { name: 'Set an override' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    // A change is refused to it (the projector's route asks for the write scope, as the decision API's does).
    const res = await fetch(`${projector.baseUrl}/v1/decision-api/overrides/${POLICY}/${ACME}:svc-2`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${OVERRIDES_READER_TOKEN}` },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('auth.forbidden');
    await screenshot('overrides-read-only');
  });

  it('logged no error in the browser console, and fetched nothing from another host', () => {
    expect(browserErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  });
});
