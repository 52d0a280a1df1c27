import { describe, expect, it } from 'vitest';
import { shardKeys } from './keys';
import { crc16, keySlot } from './key-slot';

describe(keySlot.name, () => {
  it('is CRC16/XMODEM: the check value of "123456789" is 0x31c3', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3);
  });

  // Values of Redis's `CLUSTER KEYSLOT` (the same as ioredis routes by): the first `{…}` only.
  it.each([
    ['foo', 12182],
    ['bar', 5061],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
    ['foo{{bar}}zap', 4015],
    ['{s0}', 11097],
    ['tally:v1:{s12}:outbox', 8685],
  ] as const)('%s → slot %i', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });

  it("gives every key of a shard its tag's slot", () => {
    const keys = shardKeys(7);
    expect(new Set([keys.outbox, keys.denials, keys.base].map(keySlot))).toEqual(new Set([keySlot('{s7}')]));
  });
});
