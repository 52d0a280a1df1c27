/**
 * The extreme-cost path end to end (issue 9): decisions at and above the global cost ceiling over
 * HTTP, batch items and Envoy RLS (`hits_addend`), through the BUILT decision-api → outbox → relay →
 * Kafka → projector → `GET /v1/usage`, on a PRIVATE stack. The ceiling is set to the top of its
 * range (TALLY_MAX_COST=10^12) so that a few thousand allowed decisions at the ceiling bring one
 * tenant's buckets to 2^53 − 1 (9,007 × 10^12 fits; 9,008 × 10^12 does not):
 * - above the ceiling: 413 `cost.too_large` everywhere (INVALID_ARGUMENT over gRPC), matched by a
 *   policy with a larger `max_cost` or unmatched, and not one usage event for them;
 * - a cost past 2^53 − 1 is not the number the caller sent: 400 `cost.invalid`;
 * - at the ceiling: allowed, and projected exactly; the one allowed decision whose usage would take
 *   the buckets past 2^53 − 1 is dead-lettered with its reason (the ledger keeps it), and the usage
 *   query answers the exact total, never `projection.corrupt`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { loadRateLimitService, type RlsRequest } from '@tally/envoy-rls';
import { createLedger, TOPICS, type Ledger } from '@tally/ledger';
import { buildTree, eventually, PublishedContracts, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppProcess, CALLER_TOKEN, type AppEnv } from './support/ledger-apps.harness';
import { DrainProbe } from './support/ledger-drain.probe';
import { readUsage } from './support/ledger-invariant.check';
import { PrivateStack } from './support/ledger-stack.harness';
import { alertExpressions, dashboardQueries, metricFamilies } from './support/monitoring-assets';

const CEILING = 1_000_000_000_000;
const MAX = Number.MAX_SAFE_INTEGER;
/** Allowed decisions at the ceiling that one bucket can hold: 9,007. */
const FITS = Math.floor(MAX / CEILING);
const run = uniqueName('extreme');
const out = resolve(__dirname, '../../.local', run);
const TENANT = `${run}-whale`;
const POLICIES = `
policies:
  - name: trial
    match: { route: trial }
    key: [tenant]
    mode: shadow
    max_cost: 5000000000000
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
`;

interface DecisionBody {
  allowed: boolean;
  code: string | null;
  decision_id: string;
  message?: string;
}

let stack: PrivateStack;
let redis: Redis;
let ledger: Ledger;
const apps: AppProcess[] = [];
let api: AppProcess;
let projector: AppProcess;

async function post<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${api.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CALLER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

function rls(request: RlsRequest): Promise<{ overall_code?: string }> {
  const { Client } = loadRateLimitService();
  const client = new Client(api.grpcAddress, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${CALLER_TOKEN}`);
  type Unary = (
    r: RlsRequest,
    m: Metadata,
    done: (e: ServiceError | null, a?: { overall_code?: string }) => void,
  ) => void;
  const call = (client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(client);
  return new Promise<{ overall_code?: string }>((done, fail) =>
    call(request, metadata, (error, answer) => (error ? fail(error) : done(answer ?? {}))),
  ).finally(() => client.close());
}

/** Every record of the dead-letter topic once `count` have arrived. */
async function deadLetters(count: number): Promise<{ value: string; headers: Record<string, string> }[]> {
  const got: { value: string; headers: Record<string, string> }[] = [];
  const consumer = ledger.consumers.create({
    groupId: uniqueName('extreme-dlq-reader'),
    topics: [TOPICS.deadLetter],
    fromBeginning: true,
    maxWaitTimeMs: 100,
  });
  await consumer.run((batch) => {
    for (const r of batch.records) got.push({ value: String(r.value), headers: { ...r.headers } });
    return Promise.resolve();
  });
  try {
    await eventually(
      () => got.length,
      (n) => n >= count,
      { timeoutMs: 60_000, intervalMs: 100, what: `${count} dead letters` },
    );
    return got;
  } finally {
    await consumer.disconnect();
  }
}

beforeAll(async () => {
  await mkdir(out, { recursive: true });
  [stack] = await Promise.all([PrivateStack.up(), buildTree(out, ['decision-api', 'relay', 'projector'])]);
  const policiesPath = join(stack.dir, 'policies.yaml');
  await writeFile(policiesPath, POLICIES);
  const env: AppEnv = {
    out,
    redisUrl: stack.redisUrl,
    brokers: stack.brokers,
    policiesPath,
    extraEnv: { TALLY_MAX_COST: String(CEILING) },
  };
  redis = new Redis(stack.redisUrl);
  ledger = createLedger({ brokers: stack.brokers, clientId: run, logLevel: 'nothing' });
  for (const kind of ['decision-api', 'relay', 'projector'] as const)
    apps.push(await AppProcess.start(kind, env));
  [api, , projector] = apps;
}, 240_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.kill('SIGKILL')));
  await ledger?.close().catch(() => undefined);
  redis?.disconnect();
  await stack?.down();
  await rm(out, { recursive: true, force: true });
}, 120_000);

describe('extreme costs (built apps, private Redis and Kafka, TALLY_MAX_COST=10^12)', () => {
  it('refuses every cost above the ceiling, allows it at the ceiling, and projects the sums exactly', async () => {
    const unmatched = { tenant: TENANT, route: 'anything' };
    const trial = { tenant: TENANT, route: 'trial' };
    const allowed: string[] = [];
    const keep = (res: { status: number; body: DecisionBody }) => {
      if (res.status === 200) allowed.push(res.body.decision_id);
      return [res.status, res.body.code];
    };

    // HTTP: at the ceiling allowed; above it 413 however large, matched by a larger max_cost or not
    expect(keep(await post('/v1/decisions', { selectors: unmatched, cost: CEILING }))).toEqual([200, null]);
    expect(keep(await post('/v1/decisions', { selectors: trial, cost: CEILING }))).toEqual([200, null]);
    for (const cost of [CEILING + 1, MAX]) {
      for (const selectors of [unmatched, trial]) {
        const res = await post<DecisionBody>('/v1/decisions', { selectors, cost });
        expect([res.status, res.body.code, res.body.allowed]).toEqual([413, 'cost.too_large', false]);
        expect(res.body.message).toContain(`at most ${CEILING} (the global ceiling, TALLY_MAX_COST)`);
      }
    }
    const unexact = await post<DecisionBody>('/v1/decisions', { selectors: unmatched, cost: 2 ** 53 });
    expect([unexact.status, unexact.body.code]).toEqual([400, 'cost.invalid']);

    // Envoy RLS: hits_addend above the ceiling is INVALID_ARGUMENT naming cost.too_large; at it, OK
    const descriptor = { entries: [{ key: 'tenant', value: TENANT }] };
    // (the descriptor's UInt64 hits_addend: the request's own is a uint32, below any ceiling ≥ 2^32)
    const over = await rls({
      domain: 'edge',
      descriptors: [{ ...descriptor, hits_addend: { value: CEILING + 1 } }],
    }).catch((e: ServiceError) => e);
    expect(over).toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining('cost.too_large'),
    });
    const atCeiling = await rls({
      domain: 'edge',
      descriptors: [{ ...descriptor, hits_addend: { value: CEILING } }],
    });
    expect(atCeiling.overall_code).toBe('OK');
    const rlsAllowed = 1;

    // batch items: each above the ceiling is its own 413; the rest bring the tenant to FITS + 1 allowed
    const items = FITS + 1 - allowed.length - rlsAllowed;
    let refusedItems = 0;
    for (let first = 0; first < items; first += 999) {
      const n = Math.min(999, items - first);
      const requests = [
        ...Array.from({ length: n }, () => ({ selectors: unmatched, cost: CEILING })),
        { selectors: unmatched, cost: CEILING + 1 },
      ];
      const res = await post<{ results: (DecisionBody & { status: number })[] }>('/v1/decisions:batch', {
        requests,
      });
      expect(res.status).toBe(200);
      for (const r of res.body.results) {
        if (r.status === 413) refusedItems++;
        else expect(keep({ status: r.status, body: r })).toEqual([200, null]);
      }
    }
    expect(refusedItems).toBe(Math.ceil(items / 999));
    expect(allowed).toHaveLength(FITS + 1 - rlsAllowed);

    // then: the ledger holds exactly the allowed decisions, each at the ceiling
    await new DrainProbe(redis, ledger.admin, 8).drained(120_000);
    const kafka = await readUsage(ledger, new Set([TENANT]));
    expect(kafka.values.size).toBe(FITS + 1);
    expect(kafka.violations).toEqual([]);
    for (const id of allowed) expect(kafka.values.has(id)).toBe(true);
    for (const [value] of kafka.values.values())
      expect((JSON.parse(value ?? '{}') as { data: { cost: number } }).data.cost).toBe(CEILING);

    // and the projection is exact at FITS decisions; the one past 2^53 − 1 is dead-lettered with its reason
    const [letter] = await deadLetters(1);
    const refusedId = (JSON.parse(letter?.value ?? '{}') as { id: string }).id;
    expect(kafka.values.has(refusedId)).toBe(true);
    expect(new PublishedContracts().deadLetterProblems(letter?.headers ?? {})).toEqual([]);
    expect(letter?.headers['tally-dlq-reason']).toMatch(
      /^overflow: the usage of policy .* would exceed 9007199254740991/,
    );
    const today = new Date();
    const day = (offset: number) =>
      new Date(
        Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + offset),
      ).toISOString();
    const usage = await eventually(
      async () => {
        const res = await fetch(
          `${projector.baseUrl}/v1/usage?tenant=${TENANT}&granularity=day&from=${day(-1)}&to=${day(2)}`,
          { headers: { authorization: `Bearer ${CALLER_TOKEN}` } },
        );
        return { status: res.status, body: (await res.json()) as { total: { cost: number; count: number } } };
      },
      (r) => r.status !== 200 || r.body.total.count >= FITS,
      { timeoutMs: 60_000, intervalMs: 250, what: 'the projected total' },
    );
    expect(usage).toMatchObject({ status: 200, body: { total: { cost: FITS * CEILING, count: FITS } } });
    expect(await projector.metric('tally_projector_events_dead_lettered_total')).toBe(1);
  }, 240_000);
});

describe('monitoring assets against these apps', () => {
  /** Registered only when the app reads a tokens file (TALLY_TOKENS_FILE); these apps take env tokens. */
  const ONLY_WITH_A_TOKENS_FILE = ['tally_token_reloads_total'];

  it('read only series that the decision-api, relay and projector export', async () => {
    const declared = new Set<string>();
    for (const app of apps) {
      const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
      for (const [, name] of text.matchAll(/^# TYPE (\S+) /gm)) declared.add(name ?? '');
    }
    const read = metricFamilies([...(await dashboardQueries()), ...(await alertExpressions())]);
    expect(read.length).toBeGreaterThanOrEqual(25);
    const missing = read.filter((name) => !declared.has(name) && !ONLY_WITH_A_TOKENS_FILE.includes(name));
    expect(missing).toEqual([]);
  });
});
