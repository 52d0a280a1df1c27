import { Cluster, Pipeline, Redis } from 'ioredis';

type Client = Redis | Cluster;
type PipelineFactory = (this: Client, commands?: unknown[][]) => Pipeline;

/** ioredis's own `Redis.prototype.pipeline` (Cluster's is the same code), as found before the swap. */
export const ioredisPipeline = Reflect.get(Redis.prototype, 'pipeline') as PipelineFactory;

/** Pipeline's prototype, plus `length` as the getter ioredis otherwise gives every instance. */
const LEAN_PROTOTYPE = Object.create(Pipeline.prototype, {
  length: {
    configurable: true,
    enumerable: false,
    get(this: { _queue: unknown[] }): number {
      return this._queue.length;
    },
  },
}) as object;

/** The fields ioredis's Pipeline (and its Commander base) constructor sets. */
interface PipelineFields {
  options: unknown;
  scriptsSet: Record<string, unknown>;
  addedBuiltinSet: Set<string>;
  redis: Client;
  isPipeline: boolean;
  replyPending: number;
  _queue: unknown[];
  _result: unknown[];
  _transactions: number;
  _shaToScript: Record<string, unknown>;
  isCluster: boolean;
  promise: Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  [command: string]: unknown;
}

/**
 * `redis.pipeline()` as ioredis 6 builds it, without its per-instance `length` accessor. ioredis's
 * constructor ends with `Object.defineProperty(this, 'length', { get: function () { … _this … } })`:
 * a getter that is a new closure over the pipeline, so every pipeline gets a map of its own, reached
 * from the shared Pipeline map's transitions, which a scavenge keeps alive — and through the getter
 * the pipeline, its commands and its results, until the next mark-compact (Node's
 * `AsyncResource.bind` did the same: libs/http `async-resource-bind.ts`). The decision API pipelines
 * every batch of decisions (`decideBatch`: a batch call, a ShouldRateLimit of several descriptors). Same fields in the same order, same prototype chain
 * (`instanceof Pipeline`), `length` from the prototype: `lean-pipeline.spec.ts` compares it with
 * ioredis's field by field, so an ioredis upgrade that changes the constructor fails there.
 */
export function leanPipeline(this: Client, commands?: unknown[][]): Pipeline {
  const redis = this as Client & PipelineFields;
  const p = Object.create(LEAN_PROTOTYPE) as PipelineFields;
  // Commander's constructor…
  p.options = {};
  p.scriptsSet = {};
  p.addedBuiltinSet = new Set();
  // …then Pipeline's.
  p.redis = redis;
  p.isPipeline = true;
  p.replyPending = 0;
  p._queue = [];
  p._result = [];
  p._transactions = 0;
  p._shaToScript = {};
  p.isCluster = redis.constructor.name === 'Cluster' || (redis as { isCluster?: boolean }).isCluster === true;
  p.options = redis.options;
  for (const name of Object.keys(redis.scriptsSet)) {
    p._shaToScript[(redis.scriptsSet[name] as { sha: string }).sha] = redis.scriptsSet[name];
    p[name] = redis[name];
    p[`${name}Buffer`] = redis[`${name}Buffer`];
  }
  for (const name of redis.addedBuiltinSet) {
    p[name] = redis[name];
    p[`${name}Buffer`] = redis[`${name}Buffer`];
  }
  p.promise = new Promise((resolve, reject) => {
    p.resolve = resolve;
    p.reject = reject;
  });
  const pipeline = p as unknown as Pipeline;
  if (Array.isArray(commands)) pipeline.addBatch(commands);
  return pipeline;
}

/** Gives `Redis` and `Cluster` clients the lean `pipeline()` in this process; idempotent. */
export function installLeanPipeline(): void {
  for (const prototype of [Redis.prototype, Cluster.prototype])
    (prototype as unknown as { pipeline: PipelineFactory }).pipeline = leanPipeline;
}
