/**
 * `tally reconcile --enforcement` against REAL Redis: a private redis-server holding both the
 * engine's counters and a projection namespace (this suite tampers with counters, which must never
 * happen in the shared Redis). Decisions go through the engine's DecisionService with the Redis
 * clock; the outbox entries become events with @tally/events' builders, as the relay publishes
 * them, and are applied with the projector's own sink (ProjectionStore.applyBatch). No Kafka: the
 * command reads Redis only.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecisionService, EngineService, allShardKeys, type EngineOptions } from '@tally/engine';
import { ledgerEventFromOutbox, type LedgerEvent, type OutboxEntry } from '@tally/events';
import type { EnforcementReconcileResult } from '@tally/ops';
import { compilePolicyFile } from '@tally/policy';
import { ProjectionNamespaces, ProjectionStore } from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { PrivateRedis, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from './cli.support';

const SHARDS = 64;
const HOUR = 3_600_000;

describe('tally reconcile --enforcement', () => {
  const tenant = uniqueName('rce-tenant');
  const policy = uniqueName('rce');
  const shadow = `${policy}-shadow`;
  const namespace = 'live';
  const dir = mkdtempSync(join(tmpdir(), 'tally-reconcile-enf-'));
  const policiesFile = join(dir, 'policies.yaml');
  let redis: PrivateRedis;
  let engineRedis: Redis;
  let projectionRedis: RedisClient;
  let store: ProjectionStore;
  let sut: DecisionService;

  const decide = (principal: string, cost: number) => sut.decide({ selectors: { tenant, principal }, cost });
  const reconcile = async (...extra: string[]) => {
    const run = await tally(
      ['reconcile', '--enforcement', '--policies', policiesFile, '--redis-url', redis.url, ...extra],
      {},
    );
    return {
      ...run,
      json: extra.includes('--json') ? (JSON.parse(run.stdout) as EnforcementReconcileResult) : null,
    };
  };

  /** The relay and the projector in one step: outbox entries → events → the namespace. */
  async function relayAndProject(extra: OutboxEntry[] = []): Promise<number> {
    const entries: OutboxEntry[] = [...extra];
    for (const shard of allShardKeys(SHARDS)) {
      for (const [id, flat] of await redis.client.xrange(shard.outbox, '-', '+')) {
        const fields: Record<string, string> = {};
        for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        entries.push(fields as unknown as OutboxEntry);
        await redis.client.xdel(shard.outbox, id);
      }
    }
    const events: LedgerEvent[] = [];
    // Each entry's one record, as the relay publishes it.
    for (const entry of entries) events.push(ledgerEventFromOutbox(entry));
    // Spread over both shards of the namespace: reconcile must sum what each holds of a key.
    for (const shard of [0, 1])
      await store.applyBatch(
        { namespace, shard },
        events.filter((_, i) => i % 2 === shard),
        [],
      );
    return entries.length;
  }

  /** The outbox entry the engine's degraded ledger would append for `entry` re-decided under fail_open. */
  function degradedTwin(entry: OutboxEntry, cost: number): OutboxEntry {
    const payload = JSON.parse(entry.p) as Record<string, unknown>;
    const id = String(payload.id);
    return {
      p: JSON.stringify({
        ...payload,
        id: `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`,
        outcome: 'degraded',
        degraded_cause: 'backend_timeout',
        cost,
      }),
      t: entry.t,
      r: '',
    };
  }

  beforeAll(async () => {
    // Every compared bucket (hour, day, month) starts on an hour: keep the whole suite inside one.
    const toNextHour = HOUR - (Date.now() % HOUR);
    if (toNextHour < 30_000) await new Promise((r) => setTimeout(r, toNextHour + 1_000));
    writeFileSync(
      policiesFile,
      [
        'policies:',
        `  - name: ${policy}`,
        `    match: { tenant: [${tenant}] }`,
        '    key: [principal]',
        '    on_backend_failure: fail_open',
        '    windows:',
        '      - { name: burst, role: burst, algorithm: token_bucket, limit: 50, period: 1s }',
        '      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }',
        '      - { name: two-hours, role: sustained, algorithm: fixed_window, limit: 100, period: 2h }',
        '      - { name: daily, role: sustained, algorithm: sliding_window, limit: 1000, period: 1d }',
        '      - { name: monthly, role: sustained, algorithm: calendar_month, limit: 10000, period: 1mo }',
        `  - name: ${shadow}`,
        `    match: { tenant: [${tenant}] }`,
        '    key: [principal]',
        '    mode: shadow',
        '    windows:',
        '      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 5, period: 1h }',
      ].join('\n'),
    );
    const compiled = compilePolicyFile(readFileSync(policiesFile, 'utf8'));
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
    redis = await PrivateRedis.start();
    engineRedis = new Redis(redis.url, {
      protocol: 2,
      enableOfflineQueue: false,
      enableAutoPipelining: false,
    });
    await new Promise((r) => engineRedis.once('ready', r));
    const options: EngineOptions = {
      redis: { mode: 'single', url: redis.url },
      shards: SHARDS,
      backendTimeoutMs: 2_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'reconcile-enforcement-secret-0123',
    };
    sut = new DecisionService(new EngineService(engineRedis, options), { current: compiled.set }, options);
    projectionRedis = createRedisClient({ mode: 'single', url: redis.url }, 'worker', 'reconcile-enf-test');
    store = new ProjectionStore(projectionRedis, { auditRetentionMs: 86_400_000, dedupTtlMs: 3_600_000 });
    await new ProjectionNamespaces(projectionRedis).ensureActive(namespace, 2);
  });

  afterAll(async () => {
    await Promise.all([engineRedis.quit(), projectionRedis.quit()]);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('agrees with the projection once the pipeline is drained, tolerating degraded and would-deny usage', async () => {
    // given a spends 3 then 4 (the shadow policy's limit of 5 would deny the second, so its counter
    // keeps 3) and b spends 2, all relayed and projected
    for (const [principal, cost] of [
      ['a', 3],
      ['a', 4],
      ['b', 2],
    ] as const) {
      expect((await decide(principal, cost)).allowed).toBe(true);
    }
    const outbox = await outboxEntries();
    const bEntry = outbox.find((e) => e.p.includes('"principal":"b"'));
    expect(bEntry).toBeDefined();
    // and a degraded decision of b (cost 5) that the ledger has and the counters never saw
    expect(await relayAndProject([degradedTwin(bEntry as OutboxEntry, 5)])).toBe(4);

    // when the enforcement counters are reconciled with the projection
    const run = await reconcile('--json');

    // then nothing is unexplained (exit 0); the two uncounted cases are listed as explainable
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const json = run.json as EnforcementReconcileResult;
    expect(json.namespace).toBe(namespace);
    expect(json.windows.map((w) => `${w.policy}/${w.window}:${w.granularity}`)).toEqual([
      `${policy}/hourly:hour`,
      `${policy}/daily:day`,
      `${policy}/monthly:month`,
      `${shadow}/hourly:hour`,
    ]);
    expect(json.skipped.map((s) => `${s.policy}/${s.window}`)).toEqual([
      `${policy}/burst`,
      `${policy}/two-hours`,
    ]);
    expect(json.keys).toBe(8);
    expect(json.outboxPending).toBe(0);
    expect(json.unexplained).toBe(0);
    expect(
      json.differences.map((d) => [
        d.policy,
        d.window,
        d.key,
        d.projected,
        d.counter,
        d.degraded,
        d.wouldDeny,
      ]),
    ).toEqual([
      [policy, 'daily', 'b', 7, 2, 1, 0],
      [policy, 'hourly', 'b', 7, 2, 1, 0],
      [policy, 'monthly', 'b', 7, 2, 1, 0],
      [shadow, 'hourly', 'a', 7, 3, 0, 1],
      // b's degraded decision also has the shadow policy's key: shown there too
      [shadow, 'hourly', 'b', 7, 2, 1, 0],
    ]);
    expect(json.differences.every((d) => d.explained && d.tenant === tenant)).toBe(true);

    // and --strict counts the explainable ones as differences
    expect((await reconcile('--strict')).code).toBe(1);
  });

  /** Changes the count of the `hourly` window's state (`<bucket>:<count>` in its policy key's hash). */
  async function addToHourly(key: string, delta: number): Promise<void> {
    const [bucket, count] = String(await redis.client.hget(key, 'hourly')).split(':');
    await redis.client.hset(key, 'hourly', `${bucket}:${Number(count) + delta}`);
  }

  it('names exactly the key whose counter was tampered with (exit 1)', async () => {
    // given a's hourly counter lowered by one behind the engine's back
    const keys = await redis.client.keys(`tally:v1:*:pk:${policy}:*:a`);
    expect(keys).toHaveLength(1);
    await addToHourly(keys[0], -1);

    const run = await reconcile('--json');
    const text = await reconcile('--tenant', tenant);

    expect(run.code).toBe(1);
    const unexplained = (run.json as EnforcementReconcileResult).differences.filter((d) => !d.explained);
    expect(unexplained).toEqual([
      {
        tenant,
        policy,
        window: 'hourly',
        key: 'a',
        granularity: 'hour',
        bucket: new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString(),
        projected: 7,
        counter: 6,
        difference: 1,
        degraded: 0,
        wouldDeny: 0,
        explained: false,
      },
    ]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      new RegExp(`${tenant} +${policy} +hourly +a .* 7 +6 +\\+1 +0 +0 +differs$`, 'm'),
    );
    expect(text.stdout).toContain('6 difference(s): 1 unexplained, 5 explainable');
    // and only that tenant's and policy's keys are read when asked
    expect((await reconcile('--tenant', 'someone-else')).code).toBe(0);
    expect((await reconcile('--policy', shadow)).code).toBe(0);
  });

  it('warns while decisions wait in the outbox: their counters are ahead of the projection', async () => {
    // given the tampered counter repaired and one more decision not yet relayed
    const keys = await redis.client.keys(`tally:v1:*:pk:${policy}:*:a`);
    await addToHourly(keys[0], 1);
    expect((await decide('c', 1)).allowed).toBe(true);

    const run = await reconcile('--json', '--policy', policy);

    expect(run.code).toBe(1);
    const json = run.json as EnforcementReconcileResult;
    expect(json.outboxPending).toBe(1);
    expect(json.differences.filter((d) => !d.explained).map((d) => [d.window, d.key, d.difference])).toEqual([
      ['daily', 'c', -1],
      ['hourly', 'c', -1],
      ['monthly', 'c', -1],
    ]);

    // and once relayed and projected, they agree again
    expect(await relayAndProject()).toBe(1);
    expect((await reconcile('--policy', policy)).code).toBe(0);
  });

  it('refuses a namespace that does not exist (exit 2)', async () => {
    const run = await reconcile('--namespace', 'nope');

    expect(run).toMatchObject({ code: 2, stdout: '', stderr: 'tally reconcile: no namespace nope' });
  });

  async function outboxEntries(): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = [];
    for (const shard of allShardKeys(SHARDS)) {
      for (const [, flat] of await redis.client.xrange(shard.outbox, '-', '+')) {
        const fields: Record<string, string> = {};
        for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        out.push(fields as unknown as OutboxEntry);
      }
    }
    return out;
  }
});
