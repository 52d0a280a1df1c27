/** Numbers and times as the pages show them: UTC everywhere, like the API. */
export function compact(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (Math.abs(v) >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toFixed(2);
}

export function timeLabel(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19) + 'Z';
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
