import { createHash } from 'node:crypto';

/** One entry of a ratelimit descriptor path: a `value` pins it, none means a counter per value. */
export interface Entry {
  readonly key: string;
  readonly value?: string;
  /** A wildcard value `prefix*`: its prefix. */
  readonly prefix?: string;
  /** `share_threshold`: every value of the prefix counts on one counter. */
  readonly shared?: boolean;
}

/**
 * Envoy's units as ratelimit counts them: fixed windows aligned on the epoch (`now / divider`), which
 * is exactly Tally's `fixed_window` bucket. Its `month` is 30 days and `week` 7, not calendar ones;
 * `year` (365 d) exceeds Tally's longest period (31 d).
 */
export const UNITS: Readonly<Record<string, { period: string; role: 'burst' | 'sustained' } | undefined>> = {
  second: { period: '1s', role: 'burst' },
  minute: { period: '1m', role: 'burst' },
  hour: { period: '1h', role: 'sustained' },
  day: { period: '1d', role: 'sustained' },
  week: { period: '7d', role: 'sustained' },
  month: { period: '30d', role: 'sustained' },
};
export const KNOWN_UNITS = [...Object.keys(UNITS), 'year'];

const NAME_MAX = 64;

/** Deterministic, valid and unique policy names for the rules of one conversion. */
export class PolicyNames {
  private readonly taken = new Set<string>();

  /** `<domain>-<k1>-<v1>-<k2>`, made plain; a hash of the path when too long or taken. */
  of(domain: string, entries: readonly Entry[]): string {
    const parts = [domain, ...entries.flatMap((e) => (e.value === undefined ? [e.key] : [e.key, e.value]))];
    const plain = parts
      .join('-')
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '');
    let name = plain.length > 0 && plain.length <= NAME_MAX ? plain : '';
    if (name === '' || this.taken.has(name)) {
      const hash = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 10);
      name = `${plain.slice(0, NAME_MAX - 11) || 'envoy'}-${hash}`;
    }
    this.taken.add(name);
    return name;
  }
}
