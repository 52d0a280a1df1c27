/** A plain text table for people: columns padded to their widest cell, numbers right-aligned. */
export function table(
  headers: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  const cells = rows.map((row) => row.map((c) => (c === null ? '-' : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || r[i] === null),
  );
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** `12.3k/s`-style rate for progress lines. */
export function rate(perSecond: number): string {
  return perSecond >= 1000 ? `${(perSecond / 1000).toFixed(1)}k/s` : `${Math.round(perSecond)}/s`;
}

/** `1m05s`, `42s`, `0.8s`. */
export function duration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** A checked file that is invalid (`policy check`, `tokens check`): every error with its path, exit 1. */
export function invalidFileOutcome<
  R extends { readonly file: string; readonly errors: readonly { path: string; message: string }[] },
>(result: R): { exitCode: 1; json: R; text: string } {
  const n = result.errors.length;
  const lines = result.errors.map((e) => `  ${e.path}: ${e.message}`);
  return {
    exitCode: 1,
    json: result,
    text: [`${result.file}: invalid, ${n} error${n === 1 ? '' : 's'}`, ...lines].join('\n'),
  };
}
