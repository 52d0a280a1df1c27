import { describe, expect, it } from 'vitest';
import { combineReloads } from './file-reload';

const ok = (pid: number, version: string) => ({ pid, result: { ok: true as const, version, changed: true } });

describe(combineReloads.name, () => {
  it("answers with this worker's result when every worker runs the same version", () => {
    expect(combineReloads([ok(1, 'v2'), ok(2, 'v2')], 2)).toEqual({
      kind: 'ok',
      mine: { ok: true, version: 'v2', changed: true },
    });
  });

  it('is invalid when any worker found the file invalid, with its errors', () => {
    const errors = [{ path: 'policies[0]', message: 'bad' }];
    expect(combineReloads([ok(1, 'v2'), { pid: 2, result: { ok: false, errors } }], 1)).toEqual({
      kind: 'invalid',
      errors,
    });
  });

  it('is incomplete when a worker did not answer, or when versions differ', () => {
    expect(combineReloads([ok(1, 'v2'), { pid: 2 }], 1)).toEqual({
      kind: 'incomplete',
      why: 'no answer from worker 2',
    });
    expect(combineReloads([ok(1, 'v2'), ok(2, 'v3')], 1)).toEqual({
      kind: 'incomplete',
      why: 'workers run versions v2, v3',
    });
    expect(combineReloads([ok(1, 'v2')], 9)).toEqual({ kind: 'incomplete', why: 'this worker took no part' });
  });
});
