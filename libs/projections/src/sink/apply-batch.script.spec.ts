import { describe, expect, it } from 'vitest';
import { parseApplyBatchReply } from './apply-batch.script';

describe(parseApplyBatchReply.name, () => {
  it('reads each reply of the legend', () => {
    expect(parseApplyBatchReply([0])).toEqual({ kind: 'applied' });
    expect(parseApplyBatchReply([1, 'u:A', 'd:A'])).toEqual({
      kind: 'already_applied',
      tokens: ['u:A', 'd:A'],
    });
    expect(
      parseApplyBatchReply([2, 5, 'cost:_all', 'overflow', '9007199254740990', 6, '', 'wrongtype', '']),
    ).toEqual({
      kind: 'refused',
      problems: [
        { keyIndex: 5, field: 'cost:_all', kind: 'overflow', stored: '9007199254740990' },
        { keyIndex: 6, field: '', kind: 'wrongtype', stored: '' },
      ],
    });
  });

  it('throws on a reply it does not know, rather than guessing', () => {
    for (const reply of [[], [7], [2], [2, 5, 'f', 'melted', ''], [2, '5', 'f', 'corrupt', ''], 'OK'])
      expect(() => parseApplyBatchReply(reply)).toThrow(/apply-batch.lua/);
  });
});
