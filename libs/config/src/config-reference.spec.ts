import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from './config-reference';
import { envBindings } from './env.decorator';
import { TallyConfig } from './tally.config';

const PAGE = resolve(__dirname, '../../../docs/configuration.md');
const SOURCE = readFileSync(resolve(__dirname, 'tally.config.ts'), 'utf8');
const BEGIN = '<!-- settings:begin -->';
const END = '<!-- settings:end -->';

/** The page with its settings table replaced by the generated one, formatted as the gate formats it. */
async function generatedPage(page: string): Promise<string> {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the ${BEGIN} … ${END} markers`);
  const text = `${page.slice(0, start + BEGIN.length)}\n\n${renderConfigReference(SOURCE)}\n\n${page.slice(end)}`;
  return format(text, { ...(await resolveConfig(PAGE)), filepath: PAGE });
}

describe(renderConfigReference.name, () => {
  it('has one row per setting, in declaration order, each with its comment', () => {
    const rows = renderConfigReference(SOURCE).split('\n').slice(2);
    expect(rows.map((row) => /^\| `([A-Z0-9_]+)`/.exec(row)?.[1])).toEqual(
      envBindings(TallyConfig).map((b) => b.variable),
    );
  });

  it('gives type, range, default and requirement from the binding and its validators', () => {
    const row = (name: string) =>
      renderConfigReference(SOURCE)
        .split('\n')
        .find((r) => r.startsWith(`| \`${name}\` |`));
    expect(row('TALLY_GRPC_READ_TIMEOUT')).toContain('| duration, 100ms..10m | `10s` |');
    expect(row('TALLY_WORKERS')).toContain('| `auto` or 1..256 | `auto` |');
    expect(row('TALLY_AUTH')).toContain('| one of `bearer`, `none` | `bearer` |');
    expect(row('TALLY_TOKEN_SECRET')).toContain('| string (secret) | required |');
    expect(row('TALLY_API_TOKENS')).toContain(
      '| required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set |',
    );
    expect(row('TALLY_TLS_KEY')).toContain('| string | unset | PEM private key file of `TALLY_TLS_CERT`. |');
  });

  it('refuses a setting without its one-line comment', () => {
    const stripped = SOURCE.replace('/** Kafka bootstrap brokers. */', '');
    expect(() => renderConfigReference(stripped)).toThrow('KAFKA_BROKERS has no TSDoc comment');
  });

  it('is the settings table of docs/configuration.md (npm run docs:config rewrites it)', async () => {
    const page = readFileSync(PAGE, 'utf8');
    const generated = await generatedPage(page);
    if (process.env.TALLY_WRITE_DOCS === '1' && generated !== page) writeFileSync(PAGE, generated);
    else expect(page).toBe(generated);
  });
});
