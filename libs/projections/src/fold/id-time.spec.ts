import { decodeTime, encodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { idTimeMs } from './id-time';

describe(idTimeMs.name, () => {
  it.each([0, 1, 1_764_547_199_999, 1_764_547_200_000, 2 ** 48 - 1])(
    'reads the time %d as ulid does',
    (ms) => {
      const id = `${encodeTime(ms, 10)}0123456789ABCDEFGH`.slice(0, 26);
      expect(id).toHaveLength(26);
      expect(idTimeMs(id)).toBe(ms);
      expect(idTimeMs(id)).toBe(decodeTime(id));
    },
  );

  it.each([
    ['too short', '01JD5Z8M3K'],
    ['a character outside the alphabet', '01JD5Z8M3U0123456789ABCDEF'],
    ['lower case', '01jd5z8m3k0123456789ABCDEF'],
    ['past 48 bits', '8ZZZZZZZZZ0123456789ABCDEF'],
    ['a non-ASCII character', '01JD5Z8M3é0123456789ABCDEF'],
  ])('is undefined for %s', (_, id) => {
    expect(idTimeMs(id)).toBeUndefined();
  });
});
