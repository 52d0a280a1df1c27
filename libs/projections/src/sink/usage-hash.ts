import { parseExactCounter } from '../fold/exact-counter';
import { parseKeyUsageValue, parseUsageField } from './projection-keys';
import type { Totals } from '../fold/totals';

/**
 * A `usage:` value as apply-batch.lua stores it: a decimal integer from 0 to 2^53 − 1 (costs and
 * counts never go down); null for anything else.
 */
export function parseUsageCounter(raw: string): number | null {
  return parseExactCounter(raw);
}

/**
 * Totals per policy of a `usage:` hash, from HGETALL's field → value object. Unknown fields are
 * ignored; a name with only one of its two fields reads the other as 0. A value that is not a
 * counter (`parseUsageCounter`) is told to `onInvalid` with its policy, or skipped without it.
 */
export function readUsageHash(
  fields: Readonly<Record<string, string>>,
  onInvalid?: (policy: string) => void,
): Map<string, Totals> {
  const totals = new Map<string, { cost: number; count: number }>();
  for (const [field, raw] of Object.entries(fields)) {
    const parsed = parseUsageField(field);
    if (parsed === null) continue;
    const value = parseUsageCounter(raw);
    if (value === null) {
      onInvalid?.(parsed.name);
      continue;
    }
    const entry = totals.get(parsed.name) ?? { cost: 0, count: 0 };
    entry[parsed.metric] += value;
    totals.set(parsed.name, entry);
  }
  return totals;
}

/** Totals per policy key of a `keys:` hash, from HGETALL's field → value object; bad values skipped. */
export function readKeyUsageHash(fields: Readonly<Record<string, string>>): Map<string, Totals> {
  const totals = new Map<string, Totals>();
  for (const [key, raw] of Object.entries(fields)) {
    const value = parseKeyUsageValue(raw);
    if (value !== null) totals.set(key, value);
  }
  return totals;
}
