import {
  decisionEventFromOutbox,
  denialEvent,
  overrideEventFromOutbox,
  usageEventFromOutbox,
  type DecisionEventV1,
  type LedgerEvent,
  type OutboxPayload,
  type UsageEventV1,
} from '@tally/events';
import { encodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { ALL_POLICIES, foldEvents, UNMATCHED_POLICY } from './fold-events';
import type { CellRoom, FoldLimits, UsageTotalIncrement } from './projection-delta';

const T0 = Date.parse('2026-11-30T23:59:59.900Z');
const ID_A = '01JD5Z8M3KQ7W4X9T2B6N0R1CA';
const ID_B = '01JD5Z8M3KQ7W4X9T2B6N0R1CB';
const ID_C = '01JD5Z8M3KQ7W4X9T2B6N0R1CC';
const ms = (iso: string) => Date.parse(iso);
/** The per-policy rows, without the all-policies aggregate (tested on its own). */
const perPolicy = (list: readonly UsageTotalIncrement[]) => list.filter((u) => u.policy !== ALL_POLICIES);

function payload(overrides: Partial<OutboxPayload> = {}): OutboxPayload {
  return {
    v: 1,
    id: ID_A,
    policy_set_version: 'v1',
    tenant: 'acme',
    selectors: { tenant: 'acme', principal: 'svc-42' },
    attributes: {},
    cost: 3,
    outcome: 'allowed',
    policies: [
      {
        name: 'notary',
        mode: 'enforce',
        key: 'svc-42',
        windows: [{ name: 's', role: 'sustained', limit: 100 }],
      },
    ],
    ...overrides,
  };
}

function results(p: OutboxPayload, wouldDeny = false): string {
  const n = p.policies.reduce((sum, policy) => sum + policy.windows.length, 0);
  return JSON.stringify(
    Array.from({ length: n }, () => ({ remaining: 1, reset_ms: 1, would_deny: wouldDeny })),
  );
}

function usage(overrides: Partial<OutboxPayload> = {}, at = T0, wouldDeny = false): UsageEventV1 {
  const p = payload(overrides);
  const event = usageEventFromOutbox({ p: JSON.stringify(p), t: String(at), r: results(p, wouldDeny) });
  if (event === null) throw new Error('fixture has no usage');
  return event;
}

/** The decision record of the first contract (every decision; allowed ones beside their usage event). */
function decision(overrides: Partial<OutboxPayload> = {}, at = T0, wouldDeny = false): DecisionEventV1 {
  const p = payload(overrides);
  return decisionEventFromOutbox({ p: JSON.stringify(p), t: String(at), r: results(p, wouldDeny) });
}

describe(foldEvents.name, () => {
  it('adds a usage event to every granularity of every policy it went through', () => {
    const sut = foldEvents([usage()]);
    expect(perPolicy(sut.usageTotals)).toEqual([
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'minute',
        start: ms('2026-11-30T23:59:00Z'),
        cost: 3,
        count: 1,
      },
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'hour',
        start: ms('2026-11-30T23:00:00Z'),
        cost: 3,
        count: 1,
      },
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'day',
        start: ms('2026-11-30T00:00:00Z'),
        cost: 3,
        count: 1,
      },
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'month',
        start: ms('2026-11-01T00:00:00Z'),
        cost: 3,
        count: 1,
      },
    ]);
    expect(sut.usage).toEqual(perPolicy(sut.usageTotals).map((total) => ({ ...total, key: 'svc-42' })));
    expect(sut.audit.map((a) => a.type)).toEqual(['policy_reload']);
    expect(sut).toMatchObject({ applied: 1, duplicates: 0 });
    expect(sut.dedup).toEqual([{ token: `u:${ID_A}`, timeMs: T0 }]);
  });

  it('sums events of one bucket and splits them at bucket boundaries (month end)', () => {
    // given two events 200 ms apart, on either side of midnight on the last day of November
    const sut = foldEvents([
      usage({ id: ID_A, cost: 2 }),
      usage({ id: ID_B, cost: 5 }, T0 + 200),
      usage({ id: ID_C, cost: 1 }),
    ]);
    const month = perPolicy(sut.usageTotals).filter((t) => t.granularity === 'month');
    expect(month).toEqual([
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'month',
        start: ms('2026-11-01T00:00:00Z'),
        cost: 3,
        count: 2,
      },
      {
        tenant: 'acme',
        policy: 'notary',
        granularity: 'month',
        start: ms('2026-12-01T00:00:00Z'),
        cost: 5,
        count: 1,
      },
    ]);
    const days = sut.usage.filter((u) => u.granularity === 'day');
    expect(days.map((u) => [new Date(u.start).toISOString(), u.key, u.cost, u.count])).toEqual([
      ['2026-11-30T00:00:00.000Z', 'svc-42', 3, 2],
      ['2026-12-01T00:00:00.000Z', 'svc-42', 5, 1],
    ]);
  });

  it('keeps keys, policies and tenants apart', () => {
    const sut = foldEvents([
      usage({ id: ID_A }),
      usage({ id: ID_B, policies: [{ name: 'notary', mode: 'enforce', key: 'svc-7', windows: [] }] }),
      usage({
        id: ID_C,
        tenant: undefined,
        policies: [{ name: 'trial', mode: 'shadow', key: 'x', windows: [] }],
      }),
    ]);
    const hours = <T extends { granularity: string }>(list: readonly T[]) =>
      list.filter((u) => u.granularity === 'hour');
    expect(hours(perPolicy(sut.usageTotals)).map((u) => [u.tenant, u.policy, u.cost, u.count])).toEqual([
      ['acme', 'notary', 6, 2],
      [null, 'trial', 3, 1],
    ]);
    expect(hours(sut.usage).map((u) => [u.tenant, u.policy, u.key, u.cost])).toEqual([
      ['acme', 'notary', 'svc-42', 3],
      ['acme', 'notary', 'svc-7', 3],
      [null, 'trial', 'x', 3],
    ]);
  });

  it('keeps a tenant-less decision apart from a tenant spelled "null"', () => {
    const sut = foldEvents([usage({ id: ID_A, tenant: undefined }), usage({ id: ID_B, tenant: 'null' })]);
    const days = sut.usage.filter((u) => u.granularity === 'day');
    expect(days.map((u) => [u.tenant, u.cost])).toEqual([
      [null, 3],
      ['null', 3],
    ]);
  });

  it('reads RFC 3339 times in any spelling into the same UTC buckets', () => {
    // given the same instant as the relay writes it and as another producer might (offset, lower case)
    const canonical = usage({ id: ID_A });
    const spelled = Object.assign(usage({ id: ID_B }), { time: '2026-12-01t00:59:59.900+01:00' });
    const sut = foldEvents([canonical, spelled]);
    expect(sut.dedup.map((d) => d.timeMs)).toEqual([T0, T0]);
    expect(perPolicy(sut.usageTotals).filter((t) => t.granularity === 'minute')).toEqual([
      expect.objectContaining({ start: ms('2026-11-30T23:59:00Z'), cost: 6, count: 2 }),
    ]);
  });

  it("reads the relay's own time spelling to the millisecond, as Date.parse does", () => {
    // given times across minutes, hours, a month and a year end, and the edges of a second
    const times = [
      '2026-11-30T23:59:59.999Z',
      '2026-12-01T00:00:00.000Z',
      '2026-12-31T23:59:59.001Z',
      '2027-01-01T00:00:00.500Z',
      '2026-11-30T09:41:27.500Z',
      '2026-11-30T09:41:59.999Z',
    ];
    const events = times.map((time, i) =>
      Object.assign(usage({ id: `01JD5Z8M3KQ7W4X9T2B6N0R1${String(i).padStart(2, '0')}` }), { time }),
    );
    // when
    const sut = foldEvents(events);
    // then
    expect(sut.dedup.map((d) => d.timeMs)).toEqual(times.map((t) => Date.parse(t)));
  });

  it('charges every applicable policy the full cost', () => {
    const two = payload({
      policies: [
        { name: 'a', mode: 'enforce', key: 'k1', windows: [] },
        { name: 'b', mode: 'shadow', key: 'k2', windows: [] },
      ],
    });
    const sut = perPolicy(foldEvents([usage(two)]).usageTotals).filter((u) => u.granularity === 'day');
    expect(sut.map((u) => [u.policy, u.cost])).toEqual([
      ['a', 3],
      ['b', 3],
    ]);
  });

  it('counts each decision once in the all-policies aggregate, however many policies it matched', () => {
    // given a decision two policies applied to, one with a single policy, and one no policy applied to
    const two = {
      policies: [
        { name: 'a', mode: 'enforce' as const, key: 'k1', windows: [] },
        { name: 'b', mode: 'shadow' as const, key: 'k2', windows: [] },
      ],
    };
    const sut = foldEvents([
      usage({ id: ID_A, ...two }),
      usage({ id: ID_B, cost: 5 }),
      usage({ id: ID_C, cost: 7, policies: [] }),
      usage({ id: ID_C, cost: 7, policies: [] }),
    ]);
    const all = sut.usageTotals.filter((u) => u.policy === ALL_POLICIES);
    expect(all.map((u) => [u.tenant, u.granularity, u.cost, u.count])).toEqual([
      ['acme', 'minute', 15, 3],
      ['acme', 'hour', 15, 3],
      ['acme', 'day', 15, 3],
      ['acme', 'month', 15, 3],
    ]);
    expect(sut.usage.some((u) => u.policy === ALL_POLICIES)).toBe(false);
  });

  it('projects usage of decisions no policy applied to under the unmatched policy', () => {
    const sut = foldEvents([usage({ policies: [] })]);
    expect(sut.usage[0]).toMatchObject({ policy: UNMATCHED_POLICY, key: '', cost: 3 });
  });

  it('applies a duplicate within the batch once', () => {
    // given the relay re-published the same usage event (same id, same time)
    const sut = foldEvents([usage(), usage(), usage()]);
    expect(sut).toMatchObject({ applied: 1, duplicates: 2 });
    expect(perPolicy(sut.usageTotals)[0]).toMatchObject({ cost: 3, count: 1 });
    expect(sut.dedup).toHaveLength(1);
  });

  it('skips events the namespace already applied', () => {
    const sut = foldEvents([usage({ id: ID_A }), usage({ id: ID_B, cost: 4 })], {
      isApplied: (token) => token === `u:${ID_A}`,
    });
    expect(sut).toMatchObject({ applied: 1, duplicates: 1 });
    expect(perPolicy(sut.usageTotals)[0]).toMatchObject({ cost: 4, count: 1 });
    expect(sut.dedup.map((d) => d.token)).toEqual([`u:${ID_B}`]);
  });

  it('marks an event in its id hour too when its time is in another hour, and only then', () => {
    // given one decision id minted at 10:59:59.980: its committed copy at Redis time 11:00:00.010,
    // its degraded copy at the API's clock 10:59:59.990 (the API gave up before the script ran)
    const minted = ms('2026-11-30T10:59:59.980Z');
    const id = `${encodeTime(minted, 10)}Q7W4X9T2B6N0R1CA`;
    const committed = usage({ id }, ms('2026-11-30T11:00:00.010Z'));
    const degraded = usage({ id, outcome: 'degraded', degraded_cause: 'backend_timeout' }, minted + 10);
    // when each is folded in a batch of its own (the first beside its v1 decision twin, as older history has it)
    const first = foldEvents([committed, decision({ id }, ms('2026-11-30T11:00:00.010Z'))]);
    const second = foldEvents([degraded]);
    // then the committed copy is marked in its event hour and in its id hour, the degraded one only
    // in its event hour, which is the id hour: both copies meet in the 10:00 set
    expect(first.dedup).toEqual([{ token: `u:${id}`, timeMs: ms('2026-11-30T11:00:00.010Z') }]);
    expect(first.idDedup).toEqual([{ token: `u:${id}`, timeMs: minted }]);
    expect(second.dedup).toEqual([{ token: `u:${id}`, timeMs: minted + 10 }]);
    expect(second.idDedup).toEqual([]);
  });

  it('refuses an event whose id-hour dedup set is unusable', () => {
    const id = `${encodeTime(ms('2026-11-30T10:59:59.980Z'), 10)}Q7W4X9T2B6N0R1CA`;
    const at = ms('2026-11-30T11:00:00.010Z');
    const sut = foldEvents([usage({ id }, at)], {
      limits: {
        touches: () => true,
        dedupRefusal: (t) => (t < ms('2026-11-30T11:00:00Z') ? 'wrongtype: ids:1000' : undefined),
        auditRefusal: () => undefined,
        totalRoom: () => undefined,
        keyRoom: () => undefined,
      },
    });
    expect(sut.refused).toEqual([{ index: 0, reason: 'wrongtype: ids:1000' }]);
    expect(sut).toMatchObject({ applied: 0, dedup: [], idDedup: [] });
  });

  it('skips a tally.decision.v1 record of an allowed or degraded decision: its usage twin folds it', () => {
    // given older history: the usage event and its v1 decision twin, allowed and degraded
    const degraded = { id: ID_B, outcome: 'degraded' as const, degraded_cause: 'backend_timeout' };
    const sut = foldEvents([usage(), decision(), usage(degraded), decision(degraded)]);
    // then each decision is applied once, from its usage event, and the twins leave no mark
    expect(sut).toMatchObject({ applied: 2, duplicates: 0 });
    expect(perPolicy(sut.usageTotals)[0]).toMatchObject({ cost: 6, count: 2 });
    expect(sut.dedup.map((d) => d.token)).toEqual([`u:${ID_A}`, `u:${ID_B}`]);
    expect(sut.audit.map((a) => [a.type, a.id])).toEqual([
      ['degraded', ID_B],
      ['policy_reload', 'policy_reload:v1'],
    ]);
    expect(foldEvents([decision(), decision(degraded)])).toMatchObject({ applied: 0, audit: [], dedup: [] });
  });

  it('applies a denial once whether relays of either contract published it (v1 and v2 share the token)', () => {
    const denial = {
      shard: 3,
      second: Math.floor(T0 / 1000),
      field: 'notary|svc-42',
      count: 2,
      p: JSON.stringify(payload()),
      reason: 'sustained_quota_exhausted' as const,
    };
    const v2 = denialEvent(denial);
    const v1: DecisionEventV1 = { ...v2, type: 'tally.decision.v1' };
    const sut = foldEvents([v1, v2]);
    expect(sut).toMatchObject({ applied: 1, duplicates: 1 });
    expect(sut.audit.filter((a) => a.type === 'denied')).toHaveLength(1);
  });

  it('records coalesced denials with their count, reason and denying policy', () => {
    const event = denialEvent({
      shard: 3,
      second: Math.floor(T0 / 1000),
      field: 'notary|svc-42',
      count: 17,
      p: JSON.stringify(payload()),
      reason: 'sustained_quota_exhausted',
    });
    const sut = foldEvents([event]);
    expect(sut.usage).toEqual([]);
    expect(sut.audit[0]).toEqual({
      id: event.id,
      timeMs: ms('2026-11-30T23:59:59.000Z'),
      type: 'denied',
      tenant: 'acme',
      policy: 'notary',
      reason: 'sustained_quota_exhausted',
      count: 17,
      selectors: { tenant: 'acme', principal: 'svc-42' },
      policySetVersion: 'v1',
    });
  });

  it('names the enforce policy whose window was exhausted, not just the first one', () => {
    const p = payload({
      outcome: 'denied',
      reason: 'burst_quota_exhausted',
      policies: [
        { name: 'first', mode: 'enforce', key: 'k', windows: [{ name: 'w', role: 'sustained', limit: 9 }] },
        { name: 'second', mode: 'enforce', key: 'k', windows: [{ name: 'w', role: 'burst', limit: 9 }] },
      ],
    });
    const r = JSON.stringify([
      { remaining: 5, reset_ms: 1, would_deny: false },
      { remaining: 0, reset_ms: 1, would_deny: true },
    ]);
    const sut = foldEvents([decisionEventFromOutbox({ p: JSON.stringify(p), t: String(T0), r })]);
    expect(sut.audit[0]).toMatchObject({ type: 'denied', policy: 'second', reason: 'burst_quota_exhausted' });
  });

  it('records degraded decisions with their cause, from their usage event', () => {
    const sut = foldEvents([usage({ outcome: 'degraded', degraded_cause: 'backend_timeout' })]);
    expect(sut.audit[0]).toMatchObject({
      type: 'degraded',
      policy: 'notary',
      reason: 'backend_timeout',
      count: 1,
    });
  });

  it('records shadow would-denies, and nothing for enforce policies that allowed', () => {
    const p = payload({
      policies: [
        { name: 'live', mode: 'enforce', key: 'k', windows: [{ name: 'w', role: 'sustained', limit: 9 }] },
        { name: 'trial', mode: 'shadow', key: 'k', windows: [{ name: 'b', role: 'burst', limit: 1 }] },
      ],
    });
    const r = JSON.stringify([
      { remaining: 5, reset_ms: 1, would_deny: false },
      { remaining: 0, reset_ms: 1, would_deny: true },
    ]);
    const sut = foldEvents(
      [usageEventFromOutbox({ p: JSON.stringify(p), t: String(T0), r })].flatMap((e) =>
        e === null ? [] : [e],
      ),
    );
    expect(sut.audit.filter((a) => a.type !== 'policy_reload')).toEqual([
      {
        id: ID_A,
        timeMs: T0,
        type: 'would_deny',
        tenant: 'acme',
        policy: 'trial',
        reason: 'burst_quota_exhausted',
        count: 1,
        selectors: { tenant: 'acme', principal: 'svc-42' },
        policySetVersion: 'v1',
      },
    ]);
  });

  it('records nothing for a plain allowed decision but the policy-set version', () => {
    const sut = foldEvents([usage()]);
    expect(sut.audit.map((a) => a.type)).toEqual(['policy_reload']);
  });

  it('records each new policy-set version once, at the first time it was seen', () => {
    const sut = foldEvents([
      usage({ id: ID_B, policy_set_version: 'v2' }, T0 + 5000),
      usage({ id: ID_A, policy_set_version: 'v2' }, T0),
      usage({ id: ID_C, policy_set_version: 'v1' }, T0 + 9000),
    ]);
    expect(sut.policySetVersions).toEqual([
      { version: 'v2', firstSeenMs: T0 },
      { version: 'v1', firstSeenMs: T0 + 9000 },
    ]);
    expect(sut.audit).toEqual([
      {
        id: 'policy_reload:v2',
        timeMs: T0,
        type: 'policy_reload',
        count: 1,
        selectors: {},
        policySetVersion: 'v2',
      },
      {
        id: 'policy_reload:v1',
        timeMs: T0 + 9000,
        type: 'policy_reload',
        count: 1,
        selectors: {},
        policySetVersion: 'v1',
      },
    ]);
  });

  it('records no reload for versions the namespace already knows', () => {
    const sut = foldEvents([usage({ policy_set_version: 'v1' })], {
      knownPolicySetVersions: new Set(['v1']),
    });
    expect(sut.audit).toEqual([]);
    expect(sut.policySetVersions).toEqual([]);
  });

  it('records every override change as an override row: before, after, who, why; deduplicated by id', () => {
    // given a set (none before) and its removal, the removal delivered twice
    const after = '5;;hourly=500\n{"reason":"launch","set_by":"ops","updated_at":' + T0 + '}';
    const change = (id: string, action: 'set' | 'remove', b: string, a: string, n: number, at: number) =>
      overrideEventFromOutbox({
        o: JSON.stringify({
          v: 1,
          id,
          action,
          policy: 'p',
          key: 'acme',
          tenant: 'acme',
          set_by: 'ops',
          reason: action === 'set' ? 'launch' : '',
        }),
        b,
        a,
        n: String(n),
        t: String(at),
      });
    const set = change(ID_A, 'set', '', after, 5, T0);
    const removed = change(ID_B, 'remove', after, '', 6, T0 + 1000);

    const sut = foldEvents([set, removed, removed]);

    expect(sut.applied).toBe(2);
    expect(sut.duplicates).toBe(1);
    expect(sut.dedup.map((d) => d.token)).toEqual([`o:${ID_A}`, `o:${ID_B}`]);
    expect(sut.usage).toEqual([]);
    expect(sut.policySetVersions).toEqual([]);
    const state = {
      version: 5,
      limits: { hourly: 500 },
      reason: 'launch',
      set_by: 'ops',
      updated_at: new Date(T0).toISOString(),
    };
    expect(sut.audit).toEqual([
      {
        id: ID_A,
        timeMs: T0,
        type: 'override',
        tenant: 'acme',
        policy: 'p',
        reason: 'launch',
        count: 1,
        selectors: {},
        policySetVersion: '',
        change: { action: 'set', key: 'acme', version: 5, set_by: 'ops', after: state },
      },
      {
        id: ID_B,
        timeMs: T0 + 1000,
        type: 'override',
        tenant: 'acme',
        policy: 'p',
        reason: '',
        count: 1,
        selectors: {},
        policySetVersion: '',
        change: { action: 'remove', key: 'acme', version: 6, set_by: 'ops', before: state },
      },
    ]);
  });

  it('folds history of either contract to the same delta: v1 decisions + usage, or usage + v2 denials', () => {
    // given one of each kind of decision, and an override change
    const shadowPolicies = [
      {
        name: 'live',
        mode: 'enforce' as const,
        key: 'k',
        windows: [{ name: 'w', role: 'sustained' as const, limit: 9 }],
      },
      {
        name: 'trial',
        mode: 'shadow' as const,
        key: 'k',
        windows: [{ name: 'b', role: 'burst' as const, limit: 1 }],
      },
    ];
    const plain = { id: ID_A };
    const shadow = { id: ID_B, policies: shadowPolicies };
    const degraded = { id: ID_C, outcome: 'degraded' as const, degraded_cause: 'backend_unavailable' };
    const denial = denialEvent({
      shard: 3,
      second: Math.floor(T0 / 1000),
      field: 'notary|svc-42|sustained_quota_exhausted',
      count: 4,
      p: JSON.stringify(payload({ policy_set_version: 'v0' })),
      reason: 'sustained_quota_exhausted',
      r: JSON.stringify([{ remaining: 0, reset_ms: 5, would_deny: true }]),
    });
    const change = overrideEventFromOutbox({
      o: JSON.stringify({
        v: 1,
        id: '01JD5Z8M3KQ7W4X9T2B6N0R1CF',
        action: 'set',
        policy: 'notary',
        key: 'svc-42',
        tenant: 'acme',
        set_by: 'ops',
        reason: 'r',
      }),
      b: '',
      a: '1;;s=9\n{"reason":"r","set_by":"ops","updated_at":1}',
      n: '1',
      t: String(T0 + 7),
    });
    const newEra: LedgerEvent[] = [
      usage(plain, T0 + 1),
      usage(shadow, T0 + 2, true),
      usage(degraded, T0 + 3),
      denial,
      change,
    ];
    // and the same decisions as relays of the first contract published them: every usage event
    // with its v1 decision twin, the denial as v1, the change on the same topic
    const v1Denial: DecisionEventV1 = { ...denial, type: 'tally.decision.v1' };
    const oldEra: LedgerEvent[] = [
      decision(plain, T0 + 1),
      usage(plain, T0 + 1),
      usage(shadow, T0 + 2, true),
      usage(degraded, T0 + 3),
      decision(shadow, T0 + 2, true),
      v1Denial,
      decision(degraded, T0 + 3),
      change,
    ];
    // when both are folded
    const fromNew = foldEvents(newEra);
    const fromOld = foldEvents(oldEra);
    // then the deltas are the same, audit rows and dedup marks included
    expect(fromOld).toEqual(fromNew);
    expect(fromNew.audit.map((a) => a.type)).toEqual([
      'would_deny',
      'degraded',
      'denied',
      'override',
      'policy_reload',
      'policy_reload',
    ]);
    expect(fromNew).toMatchObject({ applied: 5, duplicates: 0 });
  });

  it('is deterministic: the same events give the same delta', () => {
    const events = [usage({ id: ID_A }), decision({ id: ID_B }), usage({ id: ID_C, cost: 9 }, T0 + 120_000)];
    expect(foldEvents(events)).toEqual(foldEvents(events));
    expect(foldEvents([])).toMatchObject({ applied: 0, usage: [], audit: [], dedup: [] });
  });
});

describe('exact sums (issue 9)', () => {
  const MAX = Number.MAX_SAFE_INTEGER;

  it('never sums a cell past 2^53−1: the event that would take it there is refused, not rounded', () => {
    // given two unmatched decisions of one tenant whose costs add up past 2^53−1, and a small one
    const sut = foldEvents([
      usage({ id: ID_A, cost: MAX - 1000, policies: [] }),
      usage({ id: ID_B, cost: 1500, policies: [] }),
      usage({ id: ID_C, cost: 1000, policies: [] }),
    ]);
    // then the second is refused (it alone would overflow), the third still fits exactly
    expect(sut.refused).toEqual([{ index: 1, reason: expect.stringMatching(/^overflow: /) as unknown }]);
    expect(sut.applied).toBe(2);
    const month = sut.usage.filter((u) => u.granularity === 'month');
    expect(month.map((u) => [u.policy, u.cost, u.count])).toEqual([[UNMATCHED_POLICY, MAX, 2]]);
    expect(sut.dedup.map((d) => d.token)).toEqual([`u:${ID_A}`, `u:${ID_C}`]);
  });
});

describe('folding with the limits of a refused step', () => {
  const MAX = Number.MAX_SAFE_INTEGER;
  const NOV = ms('2026-11-01T00:00:00Z');
  const stored = (cost: number): CellRoom => ({ kind: 'stored', cost, count: 0 });
  const limits = (over: Partial<FoldLimits>): FoldLimits => ({
    touches: (tenant) => tenant === 'acme',
    dedupRefusal: () => undefined,
    auditRefusal: () => undefined,
    totalRoom: () => undefined,
    keyRoom: () => undefined,
    ...over,
  });

  it('takes events in order while they fit the room left, refusing each that does not', () => {
    // given: 10 left in acme's November total of policy notary
    const room = limits({
      totalRoom: (_t, policy, granularity) =>
        policy === 'notary' && granularity === 'month' ? stored(MAX - 10) : undefined,
    });
    const sut = foldEvents(
      [usage({ id: ID_A, cost: 4 }), usage({ id: ID_B, cost: 7 }), usage({ id: ID_C, cost: 6 })],
      { limits: room },
    );
    expect(sut.refused).toEqual([
      {
        index: 1,
        reason:
          'overflow: the usage of policy notary (tenant "acme") in the month bucket of 2026-11-01T00:00:00Z would exceed 9007199254740991 (cost stored 9007199254740981, earlier in the step 4, this event 7)',
      },
    ]);
    expect(perPolicy(sut.usageTotals).find((t) => t.granularity === 'month' && t.start === NOV)?.cost).toBe(
      10,
    );
  });

  it('refuses every event of a refused cell, and only the events that write audit rows there', () => {
    const room = limits({
      keyRoom: (tenant) =>
        tenant === 'acme' ? { kind: 'refused' as const, reason: 'corrupt: x' } : undefined,
      auditRefusal: (tenant) => (tenant === 'globex' ? 'wrongtype: audit' : undefined),
    });
    const denied = decision({
      id: ID_B,
      tenant: 'globex',
      outcome: 'denied',
      reason: 'burst_quota_exhausted',
    });
    const globex = { tenant: 'globex', selectors: { tenant: 'globex' } };
    const shadow = usage(
      { id: ID_C, ...globex, policies: [{ ...payload().policies[0], mode: 'shadow' }] },
      T0,
      true,
    );
    const plain = usage({ id: '01JD5Z8M3KQ7W4X9T2B6N0R1CD', ...globex });
    const sut = foldEvents([usage({ id: ID_A }), decision({ id: ID_A }), denied, shadow, plain], {
      limits: limits({ ...room, touches: () => true }),
    });
    expect(sut.refused).toEqual([
      { index: 0, reason: 'corrupt: x' },
      { index: 2, reason: 'wrongtype: audit' },
      { index: 3, reason: 'wrongtype: audit' },
    ]);
    expect(sut.applied).toBe(1);
    expect(sut.usage.map((u) => u.tenant)).toEqual(['globex', 'globex', 'globex', 'globex']);
  });

  it('refuses every event of an hour whose dedup set is unusable, and leaves out what was refused before', () => {
    const room = limits({ dedupRefusal: () => 'wrongtype: ids' });
    const denied = decision({ id: ID_B, outcome: 'denied', reason: 'burst_quota_exhausted' });
    const sut = foldEvents([usage({ id: ID_A }), denied], { limits: room });
    expect(sut.refused.map((r) => r.index)).toEqual([0, 1]);
    const again = foldEvents([usage({ id: ID_A }), usage({ id: ID_B })], {
      isRefused: (t) => t === `u:${ID_A}`,
    });
    expect(again).toMatchObject({ applied: 1, duplicates: 0, refused: [] });
  });
});
