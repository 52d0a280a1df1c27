import { describe, expect, it } from 'vitest';
import { parseClaimReply, parseReadReply, streamIdMs } from './stream-entries';

describe(parseReadReply.name, () => {
  it('flattens streams and entries; a timeout (null) is no entries', () => {
    const reply = [
      ['a', [['1-0', ['p', 'x', 't', '1']]]],
      [
        'b',
        [
          ['2-0', ['p', 'y']],
          ['2-1', null],
        ],
      ],
    ];
    expect(parseReadReply(reply)).toEqual([
      { stream: 'a', id: '1-0', fields: { p: 'x', t: '1' } },
      { stream: 'b', id: '2-0', fields: { p: 'y' } },
    ]);
    expect(parseReadReply(null)).toEqual([]);
  });
});

describe(parseClaimReply.name, () => {
  it('separates live entries from ids whose entry was deleted', () => {
    const sut = parseClaimReply('a', [
      '0-0',
      [
        ['1-0', ['p', 'x']],
        ['1-1', null],
      ],
      ['1-2'],
    ]);
    expect(sut).toEqual({
      next: '0-0',
      entries: [{ stream: 'a', id: '1-0', fields: { p: 'x' } }],
      deleted: ['1-2', '1-1'],
    });
  });
});

describe(streamIdMs.name, () => {
  it('reads the millisecond part of a stream id', () => {
    expect(streamIdMs('1764493200123-7')).toBe(1764493200123);
  });
});
