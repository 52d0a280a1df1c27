import type { RedisClient } from '@tally/redis';
import { parseKeyUsageValue } from '../sink/projection-keys';
import { TopKeys, type KeyUsage } from './top-keys';

/** Hashes up to this many fields are read whole, with one HGETALL. */
export const TOP_KEYS_WHOLE_READ_MAX = 1000;
/** Fields asked of each HSCAN call on a bigger hash: each call stays a short command. */
export const TOP_KEYS_SCAN_COUNT = 1000;

/** The heaviest keys of one `keys:` hash, and how many fields it has. */
export interface TopKeysRead {
  readonly keys: readonly KeyUsage[];
  readonly distinct: number;
}

/**
 * Reads one `keys:` hash without blocking Redis on a huge bucket (a day of a tenant with millions of
 * keys): HLEN first; a small hash in one HGETALL, a bigger one by HSCAN until its cursor returns to
 * 0, keeping only the best `limit` entries as fields arrive (`TopKeys`, which also drops HSCAN's
 * repeats). On the HSCAN path `distinct` is the HLEN taken before the scan: the scan is no snapshot
 * either, as the projector may write the bucket meanwhile. A value that is not `<cost>:<count>`
 * throws `corrupt(field)`: ranking without it could list the wrong heaviest keys.
 */
export async function readTopKeys(
  redis: RedisClient,
  hash: string,
  limit: number,
  corrupt: (field: string) => Error,
): Promise<TopKeysRead> {
  const top = new TopKeys(limit);
  const offer = (key: string, raw: string): void => {
    const value = parseKeyUsageValue(raw);
    if (value === null) throw corrupt(key);
    top.offer({ key, cost: value.cost, count: value.count });
  };
  const length = await redis.hlen(hash);
  if (length <= TOP_KEYS_WHOLE_READ_MAX) {
    const fields = Object.entries(await redis.hgetall(hash));
    for (const [key, raw] of fields) offer(key, raw);
    return { keys: top.ranked(), distinct: fields.length };
  }
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(hash, cursor, 'COUNT', TOP_KEYS_SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) offer(flat[i] ?? '', flat[i + 1] ?? '');
    cursor = next;
  } while (cursor !== '0');
  return { keys: top.ranked(), distinct: length };
}
