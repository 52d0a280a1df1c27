import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor';

describe(encodeCursor.name, () => {
  it('round-trips through decodeCursor and is URL-safe', () => {
    const state = { g: 'hour', n: 1_796_029_200_000, s: 'ácme/∑|p?=&' };
    const sut = encodeCursor(state);
    expect(sut).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(sut)).toEqual(state);
  });
});

describe(decodeCursor.name, () => {
  it.each([
    ['empty', ''],
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('{nope').toString('base64url')],
    ['JSON but not an object', Buffer.from('42').toString('base64url')],
    ['null', Buffer.from('null').toString('base64url')],
    ['too long', 'A'.repeat(4096)],
  ])('refuses %s', (_, cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });
});
