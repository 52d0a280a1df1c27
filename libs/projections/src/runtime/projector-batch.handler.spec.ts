import { usageEventFromOutbox, type OutboxPayload } from '@tally/events';
import type { BatchContext, LedgerBatch, LedgerMessage, LedgerProducer, LedgerRecord } from '@tally/ledger';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { OffsetMark } from '../sink/batch-step';
import type {
  ApplyOutcome,
  PreparedStep,
  ShardRef,
  ProjectionStore,
  RefusalSink,
  StepEvents,
} from '../sink/projection.store';
import { ProjectorBatchHandler } from './projector-batch.handler';
import { ProjectorMetrics } from './projector.metrics';
import { resolveProjectorOptions } from './projector.options';
import type { ProjectorPositions } from './projector.positions';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const TOPICS = { usage: 'u', decision: 'd', deadLetter: 'dlq' };

function usageValue(i: number): Buffer {
  const payload: OutboxPayload = {
    v: 1,
    id: `01JD5Z8M3KQ7W4X9T2B6N0${String(i).padStart(4, '0')}`,
    policy_set_version: 'v1',
    tenant: 'acme',
    selectors: { tenant: 'acme' },
    attributes: {},
    cost: 1,
    outcome: 'allowed',
    policies: [{ name: 'p', mode: 'enforce', key: `k${i}`, windows: [] }],
  };
  return Buffer.from(
    JSON.stringify(usageEventFromOutbox({ p: JSON.stringify(payload), t: String(T0), r: '[]' })),
  );
}

function batch(partition: number, first: number, n: number, bad: number[] = []): LedgerBatch {
  const records: LedgerRecord[] = Array.from({ length: n }, (_, i) => ({
    offset: String(first + i),
    key: 'acme',
    value: bad.includes(first + i) ? Buffer.from('not json') : usageValue(first + i),
    headers: {},
    timestamp: String(T0),
  }));
  return { topic: 'u', partition, highWatermark: '0', records };
}

/** Applies steps as they come (or fails them) and records what each step carried. */
class FakeStore {
  readonly applied: { events: number; offsets: readonly OffsetMark[] }[] = [];
  failNext = false;
  /** Event ids the "namespace" cannot take: handed to the refusal sink, as ProjectionStore does. */
  readonly refuse = new Set<string>();

  prepareStep(
    { namespace, shard }: ShardRef,
    events: StepEvents,
    offsets: readonly OffsetMark[],
  ): PreparedStep {
    const list = typeof events === 'function' ? events() : events;
    return {
      namespace,
      shard,
      events,
      offsets,
      applied: list.length,
      duplicates: 0,
      refused: [],
      args: { keys: [], argv: [], targets: [] },
    };
  }

  async applyStep(step: PreparedStep, refusals?: RefusalSink): Promise<ApplyOutcome> {
    await Promise.resolve();
    if (this.failNext) {
      this.failNext = false;
      throw new Error('redis down');
    }
    const events = typeof step.events === 'function' ? step.events() : step.events;
    const refused = events.flatMap((event, index) =>
      this.refuse.has(event.id) ? [{ index, event, reason: `overflow: ${event.id}` }] : [],
    );
    if (refused.length > 0) await refusals?.(refused);
    this.applied.push({ events: step.applied - refused.length, offsets: step.offsets });
    return { applied: step.applied - refused.length, duplicates: 0, refused: refused.length };
  }
}

class FakePositions {
  generation = 1;
  resyncs = 0;
  readonly commits: OffsetMark[][] = [];

  current() {
    return {
      namespace: 'live',
      shards: () => 1,
      restored: Promise.resolve(true),
      generation: this.generation,
    };
  }

  resync(): void {
    this.resyncs++;
    this.generation++;
  }

  async commit(offsets: readonly OffsetMark[]): Promise<void> {
    this.commits.push([...offsets]);
    await Promise.resolve();
  }
}

class FakeProducer {
  readonly sent: { topic: string; offsets: string[] }[] = [];
  readonly headers: Readonly<Record<string, string>>[] = [];
  readonly stepsBeforeSend: number[] = [];

  constructor(private readonly store: FakeStore) {}

  async send(topic: string, messages: readonly LedgerMessage[]): Promise<void> {
    this.stepsBeforeSend.push(this.store.applied.length);
    this.sent.push({ topic, offsets: messages.map((m) => m.headers?.['tally-dlq-offset'] ?? '') });
    for (const m of messages) this.headers.push(m.headers ?? {});
    await Promise.resolve();
  }
}

function context(stale = false): BatchContext {
  return {
    heartbeat: () => Promise.resolve(),
    isRunning: () => true,
    isStale: () => stale,
    resolveOffset: () => undefined,
    commitThrough: () => Promise.resolve(),
  };
}

function setup() {
  const store = new FakeStore();
  const positions = new FakePositions();
  const producer = new FakeProducer(store);
  const registry = new Registry();
  const metrics = new ProjectorMetrics(registry);
  const options = resolveProjectorOptions({
    redis: { mode: 'single', url: 'redis://unused' },
    groupId: 'g',
    topics: TOPICS,
    topicSpecs: [],
    auditRetentionMs: 86_400_000,
  });
  const sut = new ProjectorBatchHandler(
    options,
    producer as unknown as LedgerProducer,
    store as unknown as ProjectionStore,
    positions as unknown as ProjectorPositions,
    metrics,
  );
  const dropped = async () => (await metrics.dropped.get()).values.reduce((n, v) => n + v.value, 0);
  return { sut, store, positions, producer, dropped };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(ProjectorBatchHandler.name, () => {
  it('applies every handed-over batch once, with each partition offset, and commits what steps stored', async () => {
    const { sut, store, positions } = setup();
    // when
    await sut.handle(batch(0, 0, 300), context());
    await sut.handle(batch(1, 10, 5), context());
    await sut.drain();
    // then
    expect(store.applied.reduce((n, s) => n + s.events, 0)).toBe(305);
    const stored = new Map(store.applied.flatMap((s) => s.offsets.map((o) => [o.partition, o.nextOffset])));
    expect(Object.fromEntries(stored)).toEqual({ 0: '300', 1: '15' });
    expect(positions.commits.flat().map((o) => `${o.partition}@${o.nextOffset}`)).toContain('0@300');
  });

  it('dead-letters invalid records before any step stores an offset past them', async () => {
    const { sut, store, producer } = setup();
    await sut.handle(batch(0, 0, 4, [2]), context());
    await sut.drain();
    expect(producer.sent).toEqual([{ topic: 'dlq', offsets: ['2'] }]);
    expect(producer.stepsBeforeSend).toEqual([0]);
    expect(store.applied.reduce((n, s) => n + s.events, 0)).toBe(3);
    expect(store.applied.at(-1)?.offsets).toEqual([{ topic: 'u', partition: 0, nextOffset: '4' }]);
  });

  it('dead-letters the records of events a step refuses, with reason and origin, before that step is stored', async () => {
    const { sut, store, producer } = setup();
    // given: events 3 and 7 of partition 1 cannot be taken by the namespace
    const given = batch(1, 0, 10);
    for (const i of [3, 7]) store.refuse.add(JSON.parse(String(given.records[i]?.value)).id as string);
    // when
    await sut.handle(given, context());
    await sut.drain();
    // then
    expect(producer.sent).toEqual([{ topic: 'dlq', offsets: ['3', '7'] }]);
    expect(producer.stepsBeforeSend).toEqual([0]);
    expect(
      producer.headers.map((h) => [h['tally-dlq-topic'], h['tally-dlq-partition'], h['tally-dlq-reason']]),
    ).toEqual([
      ['u', '1', expect.stringMatching(/^overflow: /) as unknown],
      ['u', '1', expect.stringMatching(/^overflow: /) as unknown],
    ]);
    expect(store.applied).toEqual([{ events: 8, offsets: [{ topic: 'u', partition: 1, nextOffset: '10' }] }]);
  });

  it('drops a batch fetched before a seek: stale when handed over, or handed over before the seek', async () => {
    const { sut, store, positions, dropped } = setup();
    // given a batch stale when handed over, and two handed over under generation 1
    await sut.handle(batch(0, 0, 1), context(true));
    const handing = [sut.handle(batch(0, 0, 2), context()), sut.handle(batch(1, 0, 2), context())];
    // when the positions are restored (generation 2) before the loop reaches them
    positions.generation = 2;
    await Promise.all(handing);
    await sut.drain();
    // then nothing of the old generation is applied
    expect(store.applied).toEqual([]);
    expect(await dropped()).toBe(3);
  });

  it('after a failed step, seeks back to the stored offsets and applies later batches with a new writer', async () => {
    const { sut, store, positions } = setup();
    store.failNext = true;
    // when the first step fails
    await sut.handle(batch(0, 0, 3), context());
    for (let i = 0; i < 5 && positions.resyncs === 0; i++) await tick();
    // then the handler asked to seek back, and applies what comes after the seek
    expect(positions.resyncs).toBe(1);
    await sut.handle(batch(0, 0, 3), context());
    await sut.drain();
    expect(store.applied).toEqual([{ events: 3, offsets: [{ topic: 'u', partition: 0, nextOffset: '3' }] }]);
  });
});
