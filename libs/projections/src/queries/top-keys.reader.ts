import type { RedisClient } from '@tally/redis';
import { MAX_AGGREGATE } from '../fold/exact-counter';
import { parseKeyUsageValue } from '../sink/projection-keys';
import { TopKeys, type KeyUsage } from './top-keys';

/** Hashes up to this many fields are read whole, with one HGETALL. */
export const TOP_KEYS_WHOLE_READ_MAX = 1000;
/** Fields asked of each HSCAN call on a bigger hash: each call stays a short command. */
export const TOP_KEYS_SCAN_COUNT = 1000;

/** The heaviest keys of a bucket's `keys:` hashes, and how many distinct fields they have. */
export interface TopKeysRead {
  readonly keys: readonly KeyUsage[];
  readonly distinct: number;
}

/**
 * Reads the `keys:` hashes of one bucket (one per shard) without blocking Redis on a huge bucket (a day of a tenant with millions of
 * keys): HLEN first; a small hash in one HGETALL, a bigger one by HSCAN until its cursor returns to
 * 0, keeping only the best `limit` entries as fields arrive (`TopKeys`, which also drops HSCAN's
 * repeats). On the HSCAN path `distinct` is the HLEN taken before the scan: the scan is no snapshot
 * either, as the projector may write the bucket meanwhile. A value that is not `<cost>:<count>`
 * throws `corrupt(field)`: ranking without it could list the wrong heaviest keys.
 */
export async function readTopKeys(
  redis: RedisClient,
  hashes: readonly string[],
  limit: number,
  corrupt: (field: string) => Error,
): Promise<TopKeysRead> {
  // The events of one tenant share a Kafka key, hence a partition and a shard: usually only one
  // shard holds the bucket, and it is read as a single hash. Otherwise every hash is read whole and
  // summed key by key before ranking (a key's usage may be split between shards).
  const lengths = await Promise.all(hashes.map((hash) => redis.hlen(hash)));
  const held = hashes.filter((_, i) => (lengths[i] ?? 0) > 0);
  if (held.length <= 1) return readOne(redis, held[0] ?? hashes[0] ?? '', limit, corrupt);
  const sums = new Map<string, KeyUsage>();
  for (const hash of held) {
    const length = lengths[hashes.indexOf(hash)] ?? 0;
    await readWhole(redis, hash, length, (key, raw) => {
      const value = parseKeyUsageValue(raw);
      if (value === null) throw corrupt(key);
      const known = sums.get(key);
      const cost = (known?.cost ?? 0) + value.cost;
      const count = (known?.count ?? 0) + value.count;
      // Past 2^53 − 1 a sum is no longer exact: refused like a value that does not read.
      if (cost > MAX_AGGREGATE || count > MAX_AGGREGATE) throw corrupt(key);
      sums.set(key, { key, cost, count });
    });
  }
  const top = new TopKeys(limit);
  for (const entry of sums.values()) top.offer(entry);
  return { keys: top.ranked(), distinct: sums.size };
}

/** Every field of a hash: one HGETALL when small, else by HSCAN (a repeated field is seen once). */
async function readWhole(
  redis: RedisClient,
  hash: string,
  length: number,
  visit: (field: string, value: string) => void,
): Promise<void> {
  if (length <= TOP_KEYS_WHOLE_READ_MAX) {
    for (const [field, value] of Object.entries(await redis.hgetall(hash))) visit(field, value);
    return;
  }
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(hash, cursor, 'COUNT', TOP_KEYS_SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const field = flat[i] ?? '';
      if (seen.has(field)) continue;
      seen.add(field);
      visit(field, flat[i + 1] ?? '');
    }
    cursor = next;
  } while (cursor !== '0');
}

async function readOne(
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
