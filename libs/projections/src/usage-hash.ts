import { parseKeyUsageValue, parseUsageField } from './projection-keys';
import type { Totals } from './totals';

/**
 * Totals per policy of a `usage:` hash, from HGETALL's field → value object. Unknown fields are ignored; a name with only one of its two
 * fields reads the other as 0.
 */
export function readUsageHash(fields: Readonly<Record<string, string>>): Map<string, Totals> {
  const totals = new Map<string, { cost: number; count: number }>();
  for (const [field, raw] of Object.entries(fields)) {
    const parsed = parseUsageField(field);
    const value = Number(raw);
    if (parsed === null || !Number.isFinite(value)) continue;
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
