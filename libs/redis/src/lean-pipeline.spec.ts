import { Pipeline, Redis } from 'ioredis';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { ioredisPipeline, leanPipeline } from './lean-pipeline';

type Factory = typeof leanPipeline;

// Never connected: a pipeline only queues until exec, which these tests never call.
const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
redis.defineCommand('spec_script', { numberOfKeys: 1, lua: 'return KEYS[1]' });
afterAll(() => redis.disconnect());

/** V8's collections on demand: `--expose-gc` for a new context of this process. */
function gc(type: 'minor' | 'major'): void {
  setFlagsFromString('--expose-gc');
  const run = runInNewContext('gc') as (options: { type: string; execution: string }) => void;
  run({ type, execution: 'sync' });
}

const oldSpaceUsed = (): number =>
  getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;

/** Old-space growth after `n` pipelines that each hold 1 KB, all dropped, then two scavenges. */
function promotedBy(factory: Factory, n: number): number {
  gc('major');
  gc('minor');
  const before = oldSpaceUsed();
  for (let i = 0; i < n; i++)
    (factory.call(redis) as unknown as { payload: string }).payload = `${i}`.padEnd(1024, '.');
  gc('minor');
  gc('minor');
  return oldSpaceUsed() - before;
}

/** A pipeline's own fields; its promise and that promise's resolvers are its own, compared by kind. */
function fieldsOf(pipeline: Pipeline): Record<string, unknown> {
  const own = Object.getOwnPropertyNames(pipeline).filter((k) => k !== 'length');
  const field = (k: string): unknown => (pipeline as unknown as Record<string, unknown>)[k];
  const kind = (k: string): unknown =>
    ['promise', 'resolve', 'reject'].includes(k) ? typeof field(k) : field(k);
  return Object.fromEntries(own.map((k) => [k, kind(k)]));
}

describe('leanPipeline', () => {
  it('has the fields of ioredis own pipeline, in its order, and no own length', () => {
    const node = ioredisPipeline.call(redis);
    const lean = leanPipeline.call(redis);
    expect(Object.getOwnPropertyNames(lean)).toEqual(
      Object.getOwnPropertyNames(node).filter((k) => k !== 'length'),
    );
    expect(fieldsOf(lean)).toEqual(fieldsOf(node));
    expect(Object.hasOwn(node, 'length')).toBe(true);
    expect(Object.hasOwn(lean, 'length')).toBe(false);
    expect(lean).toBeInstanceOf(Pipeline);
    expect(lean.options).toBe(redis.options);
  });

  it('queues commands, scripts and a batch like ioredis own, and counts them in length', () => {
    const lean = leanPipeline.call(redis, [['set', 'a', '1']]);
    lean.get('a');
    (lean as unknown as { spec_script: (key: string) => unknown }).spec_script('k');
    expect(lean.length).toBe(3);
    const queued = (lean as unknown as { _queue: { name: string }[] })._queue;
    expect(queued.map((c) => c.name)).toEqual(['set', 'get', 'evalsha']);
  });

  it('leaves nothing in the old generation, where ioredis own pipeline promotes every one it made', () => {
    // Given 5,000 pipelines holding 1 KB each, dropped, then two scavenges
    const node = promotedBy(ioredisPipeline, 5_000);
    const lean = promotedBy(leanPipeline, 5_000);
    // Then ioredis's kept ≈ all of them alive through the scavenges (promoted), the lean one ≈ nothing
    expect(node).toBeGreaterThan(4 * 1024 * 1024);
    expect(lean).toBeLessThan(1024 * 1024);
  });
});
