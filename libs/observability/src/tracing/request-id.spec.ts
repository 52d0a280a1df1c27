import { describe, expect, it } from 'vitest';
import { newRequestId, requestIdOf } from './request-id';

describe(requestIdOf.name, () => {
  it.each(['abc', '0f8e2c1a-7d2b-4c41-9a0e-1f2d3c4b5a69', '01JD5Z3Q', 'a.b:c/d+e=f@g_h-i', 'x'.repeat(128)])(
    'keeps the safe id %s',
    (id) => {
      expect(requestIdOf(id)).toBe(id);
    },
  );

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(129)],
    ['a space', 'a b'],
    ['a newline', 'a\nb'],
    ['a quote', 'a"b'],
    ['non-ASCII', 'é'],
    ['not a string', 42],
    ['absent', undefined],
  ])('replaces %s by a new id', (_what, given) => {
    const sut = requestIdOf(given);
    expect(sut).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
    expect(sut).not.toBe(given);
  });

  it('never makes the same id twice in a process', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newRequestId()));
    expect(ids.size).toBe(1000);
  });
});
