import { AsyncResource } from 'node:async_hooks';

type Bind = (this: AsyncResource, fn: (...args: never[]) => unknown, thisArg?: unknown) => unknown;

/** Node's own `AsyncResource.prototype.bind`, as found before `installLeanBind` replaces it. */
export const nodeBind = Reflect.get(AsyncResource.prototype, 'bind') as Bind;

/**
 * `AsyncResource.prototype.bind` without the retention of Node's (24.x). Node gives every bound
 * function the deprecated `asyncResource` accessor (DEP0172), a getter and a setter that are new
 * closures over the resource: the function then gets a map of its own, reached from the shared
 * function map's transitions, which a scavenge keeps alive, and with it the resource and all it holds.
 * Fastify's content-type parser binds one per request that has a body (`request` is the resource),
 * so every decision's objects survived the young generation (≈ 7–10 KB per request), the old
 * generation grew to 3–4 × the live heap before V8 marked it, and a worker peaked at ≈ 250 MB
 * (docs/benchmarks.md, "Decision API memory"). The same function with `asyncResource` as a plain
 * property (the same value, still writable; no deprecation warning) leaves nothing behind.
 */
export const leanBind: Bind = function bind(this: AsyncResource, fn, thisArg) {
  // Node's argument check and error (ERR_INVALID_ARG_TYPE) for anything that is not a function.
  if (typeof fn !== 'function') return nodeBind.call(this, fn, thisArg);
  return boundTo(this, fn as (this: unknown, ...args: unknown[]) => unknown, thisArg);
};

function boundTo(
  resource: AsyncResource,
  run: (this: unknown, ...args: unknown[]) => unknown,
  thisArg: unknown,
): unknown {
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]): unknown {
          return resource.runInAsyncScope(run, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, run, thisArg);
  Object.defineProperties(bound, {
    length: { configurable: true, enumerable: false, value: run.length, writable: false },
    asyncResource: { configurable: true, enumerable: true, value: resource, writable: true },
  });
  return bound;
}

/** Replaces `AsyncResource.prototype.bind` (and so `AsyncResource.bind`) in this process; idempotent. */
export function installLeanBind(): void {
  (AsyncResource.prototype as unknown as { bind: Bind }).bind = leanBind;
}
