import { AsyncResource, executionAsyncId } from 'node:async_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { leanBind, nodeBind } from './async-resource-bind';

type Bound = ((...args: unknown[]) => unknown) & { asyncResource: unknown };
const bindWith = (
  bind: typeof leanBind,
  resource: AsyncResource,
  fn: (...a: never[]) => unknown,
  thisArg?: unknown,
) => bind.call(resource, fn, thisArg) as Bound;

/** V8's minor GC on demand (a scavenge): `--expose-gc` for a new context of this process. */
function minorGc(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: string; execution: string }) => void;
  gc({ type: 'minor', execution: 'sync' });
}

const oldSpaceUsed = (): number =>
  getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;

/** Old-space growth after binding `n` functions to resources that each hold 1 KB, all dropped. */
function promotedBy(bind: typeof leanBind, n: number): number {
  minorGc();
  minorGc();
  const before = oldSpaceUsed();
  for (let i = 0; i < n; i++) {
    const resource = new AsyncResource('spec');
    (resource as unknown as { payload: string }).payload = `${i}`.padEnd(1024, '.');
    bindWith(bind, resource, () => i)();
  }
  minorGc();
  minorGc();
  return oldSpaceUsed() - before;
}

describe('leanBind', () => {
  it('runs the function in the resource scope with its arguments and this, like Node', () => {
    const resource = new AsyncResource('spec');
    const seen: unknown[] = [];
    const sut = bindWith(leanBind, resource, function (this: unknown, ...args: never[]) {
      seen.push(this, args, executionAsyncId());
      return 'done';
    });
    const self = { me: 1 };
    expect(sut.call(self, 1, 2)).toBe('done');
    expect(seen).toEqual([self, [1, 2], resource.asyncId()]);
  });

  it('binds this when given, and keeps length and asyncResource (a plain writable property)', () => {
    const resource = new AsyncResource('spec');
    const self = { me: 2 };
    const sut = bindWith(
      leanBind,
      resource,
      function (this: unknown, _a: never, _b: never) {
        return this;
      },
      self,
    );
    expect(sut()).toBe(self);
    expect(sut.length).toBe(2);
    expect(sut.asyncResource).toBe(resource);
    sut.asyncResource = 'other';
    expect(sut.asyncResource).toBe('other');
  });

  it('refuses what is not a function with Node own error', () => {
    const resource = new AsyncResource('spec');
    expect(() => leanBind.call(resource, 42 as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }),
    );
  });

  it('leaves nothing in the old generation, where Node own bind promotes every resource it bound', () => {
    // Given 20,000 resources of 1 KB each, bound and dropped, then two scavenges
    const node = promotedBy(nodeBind, 20_000);
    const lean = promotedBy(leanBind, 20_000);
    // Then Node's bind kept ≈ 20 MB alive through the scavenges (promoted), the lean one ≈ nothing
    expect(node).toBeGreaterThan(10 * 1024 * 1024);
    expect(lean).toBeLessThan(2 * 1024 * 1024);
  });
});
