import { describe, expect, it } from 'vitest';
import { sameText } from './connection-grants';

describe(sameText.name, () => {
  it.each([
    ['Bearer abc', 'Bearer abc', true],
    ['Bearer abc', 'Bearer abd', false],
    ['Bearer abc', 'Xearer abc', false],
    ['Bearer abc', 'Bearer ab', false],
    ['Bearer abc', 'Bearer abc ', false],
    ['Bearer abc', 'Bearer abc\u0000', false],
    ['Bearer abc', '', false],
    ['', '', true],
  ])('%j against %j: %s', (known, presented, same) => {
    expect(sameText(known, presented)).toBe(same);
  });
});
