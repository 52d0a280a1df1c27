/**
 * The set form's limits field: `minute=0, hourly=100` → `{ minute: 0, hourly: 100 }`. Only the shape
 * is checked here (a window name and a whole number); which windows the policy has and the bounds of a
 * limit are the decision API's to judge, and its refusal names the field.
 */
export function parseLimits(
  text: string,
): { ok: true; limits: Record<string, number> } | { ok: false; error: string } {
  const limits: Record<string, number> = {};
  const parts = text.split(/[\s,;]+/).filter((p) => p !== '');
  if (parts.length === 0) return { ok: false, error: 'name at least one window: window=limit' };
  for (const part of parts) {
    const match = /^([^=]+)=(\d{1,15})$/.exec(part);
    if (match === null) return { ok: false, error: `"${part}" is not window=limit (a whole number ≥ 0)` };
    limits[match[1]] = Number(match[2]);
  }
  return { ok: true, limits };
}

/** `{ minute: 0, hourly: 100 }` → `minute=0, hourly=100`, windows in name order. */
export function limitsText(limits: Record<string, number>): string {
  return Object.keys(limits)
    .sort()
    .map((w) => `${w}=${limits[w]}`)
    .join(', ');
}
