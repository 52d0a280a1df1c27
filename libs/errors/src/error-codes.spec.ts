import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode } from './error-codes';

const DOC = resolve(__dirname, '../../../docs/decision-api.md');

/** The rows between the error-code markers of docs/decision-api.md, as `code | statuses | meaning`. */
function docRows(): string[] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('<!-- error-codes:start -->');
  const end = text.indexOf('<!-- error-codes:end -->');
  if (start < 0 || end < start) throw new Error('docs/decision-api.md has no error-codes markers');
  return text
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell, i) => (i === 0 ? cell.trim().replace(/^`|`$/g, '') : cell.trim()))
        .join(' | '),
    );
}

/** The rows the doc must show, from the vocabulary itself. */
function vocabularyRows(): string[] {
  return Object.entries(ERROR_CODES).map(
    ([code, { statuses, meaning }]) => `${code} | ${statuses.join(', ')} | ${meaning}`,
  );
}

describe('ERROR_CODES', () => {
  it('is the table docs/decision-api.md shows, row for row', () => {
    // A failure prints the rows the doc should have: paste them between the markers.
    expect(docRows()).toEqual(vocabularyRows());
  });

  it('gives every code a 4xx or 5xx status and a meaning', () => {
    for (const [code, { statuses, meaning }] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[a-z_]+(\.[a-z_]+)?$/);
      expect(statuses.length).toBeGreaterThan(0);
      for (const s of statuses) expect(s >= 400 && s < 600).toBe(true);
      expect(meaning.length).toBeGreaterThan(5);
    }
  });

  it('knows its own codes and nothing else', () => {
    expect(isErrorCode('quota.exceeded')).toBe(true);
    expect(isErrorCode('FST_ERR_BAD_URL')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
  });
});
