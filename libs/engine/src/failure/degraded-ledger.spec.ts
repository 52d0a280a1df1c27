import type { Policy, PolicySet } from '@tally/policy';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DecisionObserver } from '../decision-observer';
import { planDecision, type DecisionPlan } from '../plan/decision-plan';
import type { DegradedEntry } from './degraded-entry';
import { DegradedLedger } from './degraded-ledger';
import type { DegradedOutbox } from './degraded-outbox';
import type { DegradedLedgerOptions } from './degraded-ledger.options';
import type { EngineOptions } from '../engine.options';
import { testPolicy } from '@tally/testing';

const policy: Policy = testPolicy('api');
const policySet: PolicySet = { version: 'v', policies: [policy], loadedAt: 0 };

let nextId = 0;
function plan(tenant = 'acme', cost = 1): DecisionPlan {
  const r = planDecision(
    { selectors: { tenant, principal: 'p' }, cost },
    {
      policySet,
      tokenSecret: 'unit-test-secret-0123456789',
      shards: 8,
      maxCost: 1_000_000,
      decisionId: `D${nextId++}`,
    },
  );
  if (!r.ok) throw new Error(r.refusal.message);
  return r.plan;
}

/**
 * A Redis adapter double: `up` acknowledges everything, `down` nothing, `loseLast` all but the last;
 * the shards in `downShards` acknowledge nothing whatever the mode.
 */
class FakeOutbox implements DegradedOutbox {
  mode: 'up' | 'down' | 'loseLast' = 'down';
  downShards = new Set<number>();
  readonly appended: DegradedEntry[] = [];
  readonly calls: number[] = [];
  closeTask: (() => Promise<void>) | undefined;

  appendDegraded(entries: readonly DegradedEntry[]): Promise<ReadonlySet<DegradedEntry>> {
    this.calls.push(entries.length);
    const acked = (
      this.mode === 'up' ? entries : this.mode === 'loseLast' ? entries.slice(0, -1) : []
    ).filter((e) => !this.downShards.has(e.shard));
    this.appended.push(...acked);
    return Promise.resolve(new Set(acked));
  }

  beforeClose(task: () => Promise<void>): void {
    this.closeTask = task;
  }
}

describe(DegradedLedger.name, () => {
  let outbox: FakeOutbox;
  let now: number;
  let buffered: number[];
  let dropped: number[];
  const warnings: string[] = [];

  function ledger(over: Partial<DegradedLedgerOptions> = {}): DegradedLedger {
    const options = {
      clock: () => now,
      degradedLedger: { probeIntervalMs: 1_000, batchSize: 2, dropLogIntervalMs: 10_000, ...over },
    } as EngineOptions;
    const observer: DecisionObserver = {
      onDegradedBuffered: (size) => buffered.push(size),
      onDegradedDropped: (n) => dropped.push(n),
    };
    const sut = new DegradedLedger(outbox, options, observer);
    vi.spyOn(sut['logger'], 'warn').mockImplementation((m: unknown) => void warnings.push(String(m)));
    vi.spyOn(sut['logger'], 'error').mockImplementation((m: unknown) => void warnings.push(String(m)));
    return sut;
  }
  const ids = (entries: readonly DegradedEntry[]) => entries.map((e) => e.decisionId);

  beforeEach(() => {
    vi.useFakeTimers();
    outbox = new FakeOutbox();
    now = 1_700_000_000_000;
    buffered = [];
    dropped = [];
    warnings.length = 0;
    nextId = 0;
  });
  afterEach(() => vi.useRealTimers());

  it('records a degraded decision with its payload, cause and the injected clock', () => {
    const sut = ledger();
    const p = plan();
    sut.record(p, 'backend_timeout');
    expect(sut.size).toBe(1);
    expect(buffered).toEqual([1]);
    outbox.mode = 'up';
    sut.nudge();
    return vi.waitFor(() => {
      expect(outbox.appended).toHaveLength(1);
      const [entry] = outbox.appended;
      expect(entry).toMatchObject({ decisionId: p.decisionId, outbox: p.shard.outbox, timeMs: now });
      expect(JSON.parse(entry.payload)).toMatchObject({
        id: p.decisionId,
        outcome: 'degraded',
        degraded_cause: 'backend_timeout',
      });
    });
  });

  it('does not record a cost-0 peek: it spends nothing and an allowed one is not in the outbox either', () => {
    const sut = ledger();
    sut.record(plan('acme', 0), 'backend_unavailable');
    expect(sut.size).toBe(0);
  });

  it('keeps everything while Redis refuses, then flushes in order on the next successful step', async () => {
    // given three degraded decisions and a Redis that does not acknowledge
    const sut = ledger({ probeIntervalMs: 60_000 });
    const plans = [plan('a'), plan('b'), plan('c')];
    for (const p of plans) sut.record(p, 'backend_unavailable');
    await sut.flush();
    expect(sut.size).toBe(3);
    // every shard was tried once in the run (three tenants, three shards), none more
    expect(outbox.calls).toEqual([2, 1]);
    // when Redis answers again and a decision step succeeds
    outbox.mode = 'up';
    sut.nudge();
    await sut.flush();
    // then every entry is appended once, oldest first, in batches
    expect(ids(outbox.appended)).toEqual(plans.map((p) => p.decisionId));
    expect(outbox.calls).toEqual([2, 1, 2, 1]);
    expect(sut.size).toBe(0);
    expect(buffered.at(-1)).toBe(0);
  });

  it('removes only acknowledged entries: a lost acknowledgement is retried first', async () => {
    const sut = ledger({ probeIntervalMs: 60_000 });
    for (let i = 0; i < 3; i++) sut.record(plan(), 'backend_timeout');
    outbox.mode = 'loseLast';
    await sut.flush();
    // the first batch lost its second entry, so the run stopped there
    expect(ids(outbox.appended)).toEqual(['D0']);
    expect(sut.size).toBe(2);
    outbox.mode = 'up';
    await sut.flush();
    expect(ids(outbox.appended)).toEqual(['D0', 'D1', 'D2']);
  });

  it('drains the healthy shards when one shard fails, and keeps only that shard’s entries', async () => {
    // given entries of two tenants on two shards, one of them failing
    const sut = ledger({ probeIntervalMs: 60_000, batchSize: 2 });
    const [a, b] = [plan('a'), plan('b')];
    expect(a.shard.shard).not.toBe(b.shard.shard);
    const plans = [a, b, plan('a'), plan('b'), plan('b'), plan('b')];
    for (const p of plans) sut.record(p, 'backend_timeout');
    outbox.mode = 'up';
    outbox.downShards = new Set([a.shard.shard]);
    // when a flush runs
    await sut.flush();
    // then every entry of the healthy shard is appended once, and the failing shard was tried once
    const ofB = plans.filter((p) => p.shard.shard === b.shard.shard).map((p) => p.decisionId);
    expect(ids(outbox.appended)).toEqual(ofB);
    expect(sut.size).toBe(2);
    // and once it answers again its entries follow, none of the others twice
    outbox.downShards.clear();
    await sut.flush();
    expect(ids(outbox.appended).sort()).toEqual(plans.map((p) => p.decisionId).sort());
    expect(sut.size).toBe(0);
  });

  it('probes Redis periodically while entries wait, and stops probing once empty', async () => {
    const sut = ledger({ probeIntervalMs: 1_000 });
    sut.record(plan(), 'backend_unavailable');
    await vi.advanceTimersByTimeAsync(999);
    expect(outbox.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(outbox.calls).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(outbox.calls).toEqual([1, 1]);
    // when Redis is back the next probe drains the buffer
    outbox.mode = 'up';
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sut.size).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(outbox.calls).toEqual([1, 1, 1]);
  });

  it('shares one flush between concurrent triggers', async () => {
    const sut = ledger();
    sut.record(plan(), 'backend_unavailable');
    outbox.mode = 'up';
    sut.nudge();
    sut.nudge();
    await Promise.all([sut.flush(), sut.flush()]);
    expect(outbox.calls).toEqual([1]);
  });

  it('drops beyond its capacity, counts every drop, and warns once per period', () => {
    const sut = ledger({ capacity: 2, dropLogIntervalMs: 10_000 });
    for (let i = 0; i < 5; i++) sut.record(plan(), 'backend_unavailable');
    expect(sut.size).toBe(2);
    expect(dropped).toEqual([1, 1, 1]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/dropped 1 degraded decisions/);
    // the next warning, a period later, reports what was dropped meanwhile
    now += 10_000;
    sut.record(plan(), 'backend_unavailable');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/dropped 3 degraded decisions/);
  });

  it('tries one last flush when the engine closes, and says what is lost if Redis does not answer', async () => {
    const sut = ledger({ probeIntervalMs: 60_000, shutdownTimeoutMs: 500 });
    for (let i = 0; i < 3; i++) sut.record(plan(), 'backend_unavailable');
    outbox.mode = 'up';
    await outbox.closeTask?.();
    expect(sut.size).toBe(0);
    expect(outbox.appended).toHaveLength(3);

    const down = ledger({ probeIntervalMs: 60_000, shutdownTimeoutMs: 500 });
    outbox.mode = 'down';
    down.record(plan(), 'backend_unavailable');
    await outbox.closeTask?.();
    expect(warnings.at(-1)).toMatch(/stopping with 1 degraded decisions not in the ledger/);
  });

  it('gives up the last flush at its deadline when Redis hangs', async () => {
    const sut = ledger({ shutdownTimeoutMs: 500 });
    sut.record(plan(), 'backend_timeout');
    vi.spyOn(outbox, 'appendDegraded').mockReturnValue(new Promise(() => undefined));
    const closing = sut.close();
    await vi.advanceTimersByTimeAsync(500);
    await closing;
    expect(sut.size).toBe(1);
    expect(warnings.at(-1)).toMatch(/stopping with 1/);
  });
});
