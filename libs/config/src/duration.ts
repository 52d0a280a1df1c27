const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** `500ms`, `30s`, `15m`, `24h`, `30d` → milliseconds; `undefined` for anything else. */
export function tryDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `500ms`, `30s`, `15m`, `24h`, `30d` → milliseconds. Throws a RangeError on anything else. */
export function durationMs(text: string): number {
  const ms = tryDurationMs(text);
  if (ms === undefined) throw new RangeError(`not a duration (expected <integer><ms|s|m|h|d>): "${text}"`);
  return ms;
}
