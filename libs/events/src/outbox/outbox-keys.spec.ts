import { describe, expect, it } from 'vitest';
import {
  denialField,
  denialHashKey,
  denialLeaseKey,
  denialTag,
  outboxStreamKey,
  parseDenialField,
} from './outbox-keys';

describe('outbox keys', () => {
  it('lays the stream, the denial hash and its lease below the shard base', () => {
    expect(outboxStreamKey('tally:v1:{s7}')).toBe('tally:v1:{s7}:outbox');
    expect(denialHashKey('tally:v1:{s7}')).toBe('tally:v1:{s7}:denials');
    expect(denialLeaseKey('tally:v1:{s7}')).toBe('tally:v1:{s7}:denials:lease');
  });

  it('spells a denial tag as the count field without its second', () => {
    const tag = denialTag('notary', 'svc|42', 'sustained_quota_exhausted');
    expect(tag).toBe('notary|svc|42|sustained_quota_exhausted');
    expect(`1764493200|${tag}`).toBe(
      denialField(1764493200, 'notary', 'svc|42', 'sustained_quota_exhausted'),
    );
  });

  describe(parseDenialField.name, () => {
    it('round-trips a field whose key contains | and #', () => {
      const field = denialField(1764493200, 'notary', 'a|b#p', 'burst_quota_exhausted');
      expect(field).toBe('1764493200|notary|a|b#p|burst_quota_exhausted');
      expect(parseDenialField(field)).toEqual({
        epochSecond: 1764493200,
        policy: 'notary',
        key: 'a|b#p',
        reason: 'burst_quota_exhausted',
        part: 'count',
        countField: field,
      });
      expect(parseDenialField(`${field}#p`)).toMatchObject({
        part: 'payload',
        key: 'a|b#p',
        countField: field,
      });
      expect(parseDenialField(`${field}#r`)).toMatchObject({ part: 'results', countField: field });
    });

    it.each(['', 'x|p|k|r', '12|p', '12|p|r'])('rejects %j', (field) => {
      expect(parseDenialField(field)).toBeUndefined();
    });
  });
});
