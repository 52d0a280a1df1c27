/**
 * Policy durations: a positive integer and one unit, `ms`, `s`, `m`, `h` or `d` (`500ms`, `1s`,
 * `15m`, `24h`, `31d`). Months are not durations (their length varies): the `calendar_month`
 * algorithm handles `1mo` itself.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;
const DURATION = /^([1-9][0-9]*)(ms|s|m|h|d)$/;

/** Shortest accepted window period. */
export const MIN_PERIOD_MS = 1;
/** Longest accepted window period: 31 days, so that a month-long fixed window fits. */
export const MAX_PERIOD_MS = 31 * UNIT_MS.d;

/** `1s` → 1000. `undefined` for anything that is not `<positive integer><unit>` or overflows. */
export function parseDuration(s: string): number | undefined {
  const match = DURATION.exec(s);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as Unit];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** 60000 → `1m`, 90000 → `90s`, 1500 → `1500ms`: the largest unit that divides exactly. */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a duration in ms: ${ms}`);
  if (ms === 0) return '0ms';
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
