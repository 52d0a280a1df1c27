import { parseUsageField } from './projection-keys';
import type { Totals } from './totals';

/**
 * Totals per name of a `usage:` hash (name = policy) or a `keys:` hash (name = policy key), from
 * HGETALL's field → value object. Unknown fields are ignored; a name with only one of its two
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
