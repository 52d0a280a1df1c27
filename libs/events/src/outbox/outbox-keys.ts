import type { DenyReason } from '../deny-reasons';

/**
 * The outbox's Redis layout below one shard's base key (`tally:v1:{s<N>}`, built by the engine's
 * keys.ts, which owns the prefix and the hash tag and calls these): the stream the decision script
 * appends allowed decisions to, the hash it coalesces denials in, and the relay's lease on that hash.
 * Same hash tag as the base, so the script's keys stay in one slot. Changing any of these strings
 * is a new key version (see keys.ts).
 */
export function outboxStreamKey(shardBase: string): string {
  return `${shardBase}:outbox`;
}

/**
 * Hash of coalesced denials: field `<epochSecond>|<policy>|<key>|<reason>` → count, plus, written
 * with the first denial of that field, `…#p` → its payload (JSON) and `…#r` → its window results
 * (JSON). The relay drains seconds strictly older than the Redis clock and deletes them.
 */
export function denialHashKey(shardBase: string): string {
  return `${shardBase}:denials`;
}

/** The relay's lease on one shard's denial hash; value = the owning relay's consumer name. */
export function denialLeaseKey(shardBase: string): string {
  return `${denialHashKey(shardBase)}:lease`;
}

/**
 * `<policy>|<key>|<reason>`: a denial field without its second. The decision API hands one per
 * window to decide.lua, which prefixes the second of the denial (`denialField` spelled in Lua).
 */
export function denialTag(policy: string, key: string, reason: DenyReason): string {
  return `${policy}|${key}|${reason}`;
}

/** The count field of one coalesced denial (see `denialHashKey`). */
export function denialField(epochSecond: number, policy: string, key: string, reason: string): string {
  return `${epochSecond}|${policy}|${key}|${reason}`;
}

/** Suffix of the sample-payload field beside each count field. */
export const DENIAL_SAMPLE_SUFFIX = '#p';
/** Suffix of the sample window-results field beside each count field. */
export const DENIAL_RESULTS_SUFFIX = '#r';

/** A denial-hash field taken apart; `part` says which of the three fields of one denial it is. */
export interface DenialFieldParts {
  readonly epochSecond: number;
  readonly policy: string;
  readonly key: string;
  readonly reason: string;
  readonly part: 'count' | 'payload' | 'results';
  /** The count field this one belongs to. */
  readonly countField: string;
}

/**
 * Inverse of `denialField` (+ suffix). Policy names and reasons never contain `|` or `#`, so the key is
 * whatever lies between the second and the last `|` (a key value may contain either character).
 */
export function parseDenialField(field: string): DenialFieldParts | undefined {
  const part = field.endsWith(DENIAL_SAMPLE_SUFFIX)
    ? 'payload'
    : field.endsWith(DENIAL_RESULTS_SUFFIX)
      ? 'results'
      : 'count';
  const countField = part === 'count' ? field : field.slice(0, -2);
  const first = countField.indexOf('|');
  const second = countField.indexOf('|', first + 1);
  const last = countField.lastIndexOf('|');
  if (first < 0 || second < 0 || last <= second) return undefined;
  const epochSecond = Number(countField.slice(0, first));
  if (!/^\d+$/.test(countField.slice(0, first)) || !Number.isSafeInteger(epochSecond)) return undefined;
  return {
    epochSecond,
    policy: countField.slice(first + 1, second),
    key: countField.slice(second + 1, last),
    reason: countField.slice(last + 1),
    part,
    countField,
  };
}
