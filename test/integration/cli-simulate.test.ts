/**
 * `tally simulate` against the REAL broker: decisions of this suite's unique tenant are put on the
 * shared ledger topics as both contracts wrote them (usage + `tally.decision.v1` twins and a v1
 * denial; usage alone and a `tally.decision.v2` denial), then re-evaluated under a proposed policy
 * file (`--tenant` keeps other suites' traffic in the same range out of the figures).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decisionEventFromOutbox,
  denialEvent,
  kafkaKeyOf,
  overrideEventFromOutbox,
  usageEventFromOutbox,
  type DecisionEventV1,
  type OutboxPayload,
} from '@tally/events';
import { TOPICS, createLedger, ledgerTopicSpecs, type Ledger } from '@tally/ledger';
import { testEnv, uniqueName } from '@tally/testing';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from './cli.support';

const HOUR = 3_600_000;

describe('tally simulate', () => {
  const tenant = uniqueName('sim-tenant');
  const current = uniqueName('sim-cur');
  const proposed = uniqueName('sim-new');
  const dir = mkdtempSync(join(tmpdir(), 'tally-simulate-'));
  const file = join(dir, 'proposed.yaml');
  // All events in one hourly bucket, so the proposal's hourly window sees all of them.
  const now = Date.now();
  const base =
    Math.floor((now - 20_000) / HOUR) === Math.floor(now / HOUR)
      ? now - 20_000
      : Math.floor(now / HOUR) * HOUR;
  let ledger: Ledger;
  let env: NodeJS.ProcessEnv;

  const payload = (outcome: 'allowed' | 'denied'): OutboxPayload => ({
    v: 1,
    outcome,
    id: ulid(),
    policy_set_version: 'v-sim',
    tenant,
    selectors: { tenant, principal: 'p' },
    attributes: {},
    cost: 1,
    policies: [
      { name: current, mode: 'enforce', key: tenant, windows: [{ name: 'h', role: 'sustained', limit: 6 }] },
    ],
  });

  beforeAll(async () => {
    writeFileSync(
      file,
      [
        'policies:',
        `  - name: ${proposed}`,
        `    match: { tenant: [${tenant}] }`,
        '    key: [tenant]',
        '    windows:',
        '      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 8, period: 1h }',
      ].join('\n'),
    );
    ledger = createLedger({
      brokers: testEnv().kafkaBrokers,
      clientId: 'cli-simulate-test',
      logLevel: 'nothing',
    });
    env = { KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') };
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    // given 6 allowed decisions, then 4 denials coalesced into two events (the current limit is 6)
    const entries = Array.from({ length: 6 }, (_, i) => ({
      p: JSON.stringify(payload('allowed')),
      t: String(base + i),
      r: JSON.stringify([{ remaining: 5 - i, reset_ms: 1000, would_deny: false }]),
    }));
    const usage = entries.map((e) => usageEventFromOutbox(e)!);
    // the first three as relays of the first contract published them: with a tally.decision.v1
    // twin each (one of them twice: a re-publication), which the simulation must not count again
    const twins = entries.slice(0, 3).map((e) => decisionEventFromOutbox(e));
    twins.push(twins[0]);
    const denial = (count: number, field: string) =>
      denialEvent({
        shard: 0,
        second: Math.floor((base + 10) / 1000) + 1,
        field,
        count,
        p: JSON.stringify(payload('denied')),
        reason: 'sustained_quota_exhausted',
        r: JSON.stringify([{ remaining: 0, reset_ms: 1000, would_deny: true }]),
      });
    const v2Denial = denial(3, `${current}|${tenant}|sustained_quota_exhausted`);
    const v1Denial: DecisionEventV1 = { ...denial(1, `${current}|${tenant}|x`), type: 'tally.decision.v1' };
    // and an override change on the same topic: no decision, and no invalid record either
    const change = overrideEventFromOutbox({
      o: JSON.stringify({
        v: 1,
        id: ulid(base + 5),
        action: 'set',
        policy: current,
        key: tenant,
        tenant,
        set_by: 'ops',
        reason: 'r',
      }),
      b: '',
      a: '1;;w=9\n{"reason":"r","set_by":"ops","updated_at":1}',
      n: '1',
      t: String(base + 5),
    });
    const messages = (events: readonly Parameters<typeof kafkaKeyOf>[0][]) =>
      events.map((e) => ({ key: kafkaKeyOf(e), value: JSON.stringify(e) }));
    await ledger.producer.send(TOPICS.usage, messages(usage));
    await ledger.producer.send(TOPICS.decisionV1, messages([...twins, v1Denial]));
    await ledger.producer.send(TOPICS.decision, messages([v2Denial, change]));
  });

  afterAll(async () => {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints per policy what the proposal would allow and deny against what happened', async () => {
    const args = ['simulate', '--policies', file, '--tenant', tenant];
    const range = [
      '--from',
      new Date(base - 1000).toISOString(),
      '--to',
      new Date(now + 60_000).toISOString(),
    ];

    const json = await tally([...args, ...range, '--json'], env);
    const again = await tally([...args, ...range, '--json'], env);
    const text = await tally([...args, ...range], env);

    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      invalid: 0,
      decisions: 10,
      actual: { allowed: 6, denied: 4 },
      simulated: { allowed: 8, denied: 2 },
      changed: { allowedToDenied: 0, deniedToAllowed: 2 },
      policies: [
        {
          policy: proposed,
          proposed: true,
          recorded: false,
          actual: { applied: 0, allowed: 0, denied: 0 },
          simulated: { applied: 10, allowed: 8, denied: 2 },
        },
        {
          policy: current,
          proposed: false,
          recorded: true,
          actual: { applied: 10, allowed: 6, denied: 4 },
          simulated: { applied: 0, allowed: 0, denied: 0 },
        },
      ],
    });
    // deterministic: the same range gives the same report
    expect(JSON.parse(again.stdout)).toEqual(report);
    expect(text.stdout).toContain('proposed: 8 allowed, 2 denied (0 allowed → denied, 2 denied → allowed)');
  });

  it('refuses an invalid proposed file with every error (exit 2)', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'policies:\n  - name: Bad Name\n    key: [nope]\n');

    const result = await tally(['simulate', '--policies', bad, '--from', 'now-1h', '--to', 'now'], env);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^tally simulate: invalid policy file ${bad}:\\n  policies\\[0\\]\\.`),
    );
  });
});
