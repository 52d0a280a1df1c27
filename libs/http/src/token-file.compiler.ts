import { createHash } from 'node:crypto';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { parseDocument } from 'yaml';
import { type Role } from './access.decorator';
import { type FieldError } from './api-error';
import { checkTokenEntries } from './token-file.checks';
import { TokenFileDto } from './token-file.dto';
import { TokenGrant } from './token-grant';
import { TokenSet, type TokenEntry } from './token-set';

export type TokenFileResult = { ok: true; set: TokenSet } | { ok: false; errors: FieldError[] };

/**
 * The text of a tokens file (YAML, or JSON, which YAML reads too) → the token set in force (the
 * environment's tokens `env` first, then the file's), or every problem found, never just the first.
 * The version is the content hash of the text, so one text always has one version.
 */
export function compileTokenFile(text: string, env: readonly TokenEntry[]): TokenFileResult {
  const parsed = parseYaml(text);
  if (!parsed.ok) return parsed;
  if (!isMapping(parsed.value))
    return { ok: false, errors: [{ path: '(root)', message: 'must be a mapping with a "tokens" list' }] };
  const dto = plainToInstance(TokenFileDto, parsed.value);
  const errors = [
    ...flatten(validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true })),
    ...checkTokenEntries(dto.tokens, env),
  ];
  if (errors.length > 0) return { ok: false, errors: sortByEntry(errors) };
  const file = (parsed.value.tokens as RawEntry[]).map(toEntry);
  return { ok: true, set: new TokenSet(versionOf(text), [...env, ...file]) };
}

/** First 12 hex characters of the SHA-256 of the file text (as policy set versions). */
function versionOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}

interface RawEntry {
  readonly name: string;
  readonly sha256: string;
  readonly roles: Role[];
  readonly tenants?: string[];
}

function toEntry(raw: RawEntry): TokenEntry {
  const tenants = raw.tenants === undefined ? undefined : new Set(raw.tenants);
  return {
    digest: Buffer.from(raw.sha256, 'hex'),
    grant: new TokenGrant(raw.name, new Set(raw.roles), tenants),
  };
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseYaml(text: string): { ok: true; value: unknown } | { ok: false; errors: FieldError[] } {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({
        path: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '(yaml)',
        // prettyErrors appends a source excerpt, which could show a token pasted by mistake: cut it.
        message: `YAML: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    };
  }
  if (doc.contents === null) return { ok: false, errors: [{ path: '(root)', message: 'the file is empty' }] };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return { ok: false, errors: [{ path: '(yaml)', message: `YAML: ${(e as Error).message}` }] };
  }
}

function flatten(errors: ValidationError[], parent = '', parentIsList = false): FieldError[] {
  return errors.flatMap((e) => {
    const path = parentIsList ? `${parent}[${e.property}]` : parent ? `${parent}.${e.property}` : e.property;
    const own = Object.entries(e.constraints ?? {}).map(([name, message]) => ({
      path,
      message: name === 'whitelistValidation' ? 'unknown field' : message,
    }));
    return [...own, ...flatten(e.children ?? [], path, Array.isArray(e.value))];
  });
}

/** Keep each entry's errors together, in file order; within an entry, in the order found. */
function sortByEntry(errors: FieldError[]): FieldError[] {
  const index = (e: FieldError) => Number(/^tokens\[(\d+)\]/.exec(e.path)?.[1] ?? -1);
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => index(a.e) - index(b.e) || a.i - b.i)
    .map(({ e }) => e);
}
