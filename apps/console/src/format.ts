/** Numbers and times as the pages show them: UTC everywhere, like the API. */
export function compact(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (Math.abs(v) >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toFixed(2);
}

/** `2026-12-01T10:00:00Z`: what the API takes and answers, to the second. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function rate(v: number): string {
  return `${v.toFixed(2)}/s`;
}

/** The last point of a rate series (what "now" is on a chart). */
export function latest(points: readonly (readonly [number, number])[]): number {
  return points.length === 0 ? 0 : points[points.length - 1][1];
}

/** A number as the API answered it, never rounded away (a rate to 3 decimals). */
export function exact(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(3)));
}

/** An axis tick: short, and only as precise as the step between ticks needs (10, 2.5, 0.25, 12k). */
export function tick(v: number): string {
  if (Math.abs(v) >= 1e4) return compact(v);
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(3)));
}

/**
 * Time ticks in UTC, 24 h, as precise as the step between them: seconds, minutes, days or months;
 * the first tick of a sub-day axis also names the day.
 */
export function timeTicks(splits: readonly number[], stepMs: number): string[] {
  return splits.map((ms, i) => {
    const t = new Date(ms).toISOString();
    if (stepMs >= 28 * 86_400_000) return t.slice(0, 7);
    if (stepMs >= 86_400_000) return t.slice(0, 10);
    const clock = stepMs < 60_000 ? t.slice(11, 19) : t.slice(11, 16);
    return i === 0 ? `${clock}\n${t.slice(0, 10)}` : clock;
  });
}
