import { usageEventFromOutbox, type LedgerEvent } from '@tally/events';
import { describe, expect, it } from 'vitest';
import type { OffsetMark } from '../sink/batch-step';
import { foldEvents } from '../fold/fold-events';
import type { ProjectionDelta } from '../fold/projection-delta';
import type { ApplyOutcome, PreparedStep, ShardRef } from '../sink/projection.store';
import { StepWriter } from './step-writer';

const T0 = Date.parse('2026-11-30T09:41:27.500Z');

function usage(i: number, key = `k${i}`): LedgerEvent {
  const payload = {
    v: 1,
    outcome: 'allowed',
    id: `01JDQ0000000000000000${String(i).padStart(5, '0')}`,
    policy_set_version: 'v1',
    tenant: 'acme',
    selectors: { tenant: 'acme' },
    attributes: {},
    cost: 1,
    policies: [{ name: 'p', mode: 'enforce', key, windows: [{ name: 'w', role: 'sustained', limit: 9 }] }],
  };
  const entry = {
    p: JSON.stringify(payload),
    t: String(T0),
    r: JSON.stringify([{ remaining: 1, reset_ms: 1 }]),
  };
  const event = usageEventFromOutbox(entry);
  if (event === null) throw new Error('an allowed decision with a cost has a usage event');
  return event;
}

const LIVE: ShardRef = { namespace: 'live', shard: 0 };

const mark = (partition: number, nextOffset: string): OffsetMark => ({ topic: 't', partition, nextOffset });

/** Records every step; applies each when `release` is called, in order, so tests see the overlap. */
class FakeStore {
  readonly steps: { events: number; offsets: readonly OffsetMark[]; delta?: ProjectionDelta }[] = [];
  readonly running: PreparedStep[] = [];
  private readonly waiting: (() => void)[] = [];
  fail = false;

  prepareStep(
    { namespace, shard }: ShardRef,
    events: readonly LedgerEvent[],
    offsets: readonly OffsetMark[],
    delta?: ProjectionDelta,
  ): PreparedStep {
    this.steps.push({ events: events.length, offsets, delta });
    const d = delta ?? foldEvents(events);
    return {
      namespace,
      shard,
      events,
      offsets,
      applied: d.applied,
      duplicates: d.duplicates,
      refused: d.refused,
      args: { keys: [], argv: [], targets: [] },
    };
  }

  async applyStep(step: PreparedStep): Promise<ApplyOutcome> {
    this.running.push(step);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.fail) throw new Error('redis down');
    return { applied: step.applied, duplicates: step.duplicates, refused: 0 };
  }

  release(): void {
    this.waiting.shift()?.();
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(StepWriter.name, () => {
  it('cuts a step once its cells reach the budget, with the highest offset per partition', async () => {
    // given: the first usage event is 21 cells (2 fields in 4 buckets of _all and p, a field in 4
    // buckets of its key, a token), each further one of a new key 5; a budget of 31 takes three
    // events
    const store = new FakeStore();
    const sut = new StepWriter(store, LIVE, 31);
    // when
    const first = sut.add([usage(1), usage(2)], mark(0, '2'));
    await tick();
    // then: nothing cut yet (2 events are 26 cells)
    expect(store.steps).toHaveLength(0);
    void sut.add([usage(3)], mark(0, '3'));
    await first;
    expect(store.steps.map((s) => [s.events, s.offsets])).toEqual([[3, [mark(0, '3')]]]);
  });

  it('folds the next steps while one runs, and holds the caller once three steps are waiting', async () => {
    const store = new FakeStore();
    const sut = new StepWriter(store, LIVE, 1);
    // when: step 1 is cut and starts; steps 2 to 4 are cut while it runs
    await sut.add([usage(1)], mark(0, '1'));
    await tick();
    expect(store.running).toHaveLength(1);
    await sut.add([usage(2)], mark(1, '5'));
    await sut.add([usage(3)], mark(1, '6'));
    let fourth = false;
    const adding = sut.add([usage(4)], mark(1, '7')).then(() => (fourth = true));
    await tick();
    // then: three steps wait behind the running one, and the add that cut the third is held
    expect(store.steps).toHaveLength(4);
    expect(store.running).toHaveLength(1);
    expect(fourth).toBe(false);
    store.release();
    await adding;
    await tick();
    // then: step 2 runs only after step 1, and flush waits for every step
    expect(store.running).toHaveLength(2);
    const flushed = sut.flush();
    for (let i = 0; i < 3; i++) {
      store.release();
      await tick();
    }
    expect(await flushed).toEqual({ applied: 4, duplicates: 0, refused: 0 });
    expect(store.running.map((s) => s.offsets)).toEqual([
      [mark(0, '1')],
      [mark(1, '5')],
      [mark(1, '6')],
      [mark(1, '7')],
    ]);
  });

  it('keeps offsets of a step without events (a batch of dead letters) and skips an empty flush', async () => {
    const store = new FakeStore();
    const sut = new StepWriter(store, LIVE, 100);
    await sut.add([], mark(2, '9'));
    await sut.add([], mark(2, '7'));
    const flushed = sut.flush();
    await tick();
    store.release();
    expect(await flushed).toEqual({ applied: 0, duplicates: 0, refused: 0 });
    expect(store.steps.map((s) => s.offsets)).toEqual([[mark(2, '9')]]);
    expect(await sut.flush()).toEqual({ applied: 0, duplicates: 0, refused: 0 });
    expect(store.steps).toHaveLength(1);
  });

  it('fails the next add and the flush after a failed step, and sends no later step', async () => {
    const store = new FakeStore();
    store.fail = true;
    const failures: unknown[] = [];
    const sut = new StepWriter(store, LIVE, 1, { onFailure: (error) => failures.push(error) });
    await sut.add([usage(1)], mark(0, '1'));
    await sut.add([usage(2)], mark(0, '2')); // cut while step 1 runs: waits behind it
    await tick();
    store.release();
    await tick();
    // then: told at once; the waiting step is never sent; later adds and the flush fail
    expect(failures).toEqual([new Error('redis down')]);
    await expect(sut.add([usage(3)], mark(0, '3'))).rejects.toThrow('redis down');
    await expect(sut.flush()).rejects.toThrow('redis down');
    expect(store.running).toHaveLength(1);
  });

  it('cuts what is pending on request, and tells each applied step with its offsets, in order', async () => {
    const store = new FakeStore();
    const told: [number, readonly OffsetMark[]][] = [];
    const sut = new StepWriter(store, LIVE, 1_000, {
      onStep: (outcome, offsets) => told.push([outcome.applied, offsets]),
    });
    await sut.add([usage(1)], mark(0, '1'));
    await sut.cutPending();
    await sut.add([usage(2), usage(3)], mark(1, '8'));
    // the second step is cut while the first runs, and runs after it
    const second = sut.cutPending();
    await tick();
    store.release();
    await second;
    await sut.cutPending(); // nothing pending: no step
    await tick();
    store.release();
    await sut.flush();
    expect(store.steps.map((s) => s.events)).toEqual([1, 2]);
    expect(told).toEqual([
      [1, [mark(0, '1')]],
      [2, [mark(1, '8')]],
    ]);
  });

  it('passes the delta it folded as events came, equal to folding the step at once', async () => {
    const store = new FakeStore();
    const sut = new StepWriter(store, LIVE, 1_000);
    const events = [usage(1, 'a'), usage(2, 'a'), usage(3, 'b'), usage(3, 'b')];
    await sut.add(events.slice(0, 2), mark(0, '2'));
    await sut.add(events.slice(2), mark(0, '4'));
    const flushed = sut.flush();
    await tick();
    store.release();
    expect(await flushed).toEqual({ applied: 3, duplicates: 1, refused: 0 });
    expect(store.steps[0]?.delta).toEqual(foldEvents(events));
  });
});

describe(`${StepWriter.name}: traced events`, () => {
  const traced = (i: number): LedgerEvent => ({
    ...usage(i),
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  });

  it("ends a traced event's span once the step holding it is applied, and only then", async () => {
    // given a writer that traces, and one traced event among untraced ones
    const store = new FakeStore();
    const ended: (string | undefined)[] = [];
    const sut = new StepWriter(store, LIVE, 1_000_000, {
      traceEvent: (event) => (error) => ended.push(error === undefined ? event.id : `failed ${event.id}`),
    });
    const event = traced(1);

    // when the step is cut and runs
    await sut.add([usage(0), event, usage(2)], mark(0, '3'));
    const flushed = sut.flush();
    await tick();
    expect(ended).toEqual([]);
    store.release();
    await flushed;

    // then exactly the traced event's span ended, once
    expect(ended).toEqual([event.id]);
  });

  it('ends it with the error when its step fails', async () => {
    const store = new FakeStore();
    store.fail = true;
    const ended: unknown[] = [];
    const sut = new StepWriter(store, LIVE, 1_000_000, { traceEvent: () => (error) => ended.push(error) });

    await sut.add([traced(1)], mark(0, '1'));
    const flushed = sut.flush().catch(() => undefined);
    await tick();
    store.release();
    await flushed;

    expect(ended).toHaveLength(1);
    expect(String(ended[0])).toContain('redis down');
  });
});
