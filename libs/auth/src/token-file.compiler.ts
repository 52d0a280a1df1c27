import { createHash } from 'node:crypto';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { flattenValidationErrors, parseYamlFile, sortByEntry } from '@tally/config';
import { type Role } from './access.decorator';
import type { FieldError } from '@tally/errors';
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
  const parsed = parseYamlFile(text, 100);
  if (!parsed.ok) return parsed;
  if (!isMapping(parsed.value))
    return { ok: false, errors: [{ path: '(root)', message: 'must be a mapping with a "tokens" list' }] };
  const dto = plainToInstance(TokenFileDto, parsed.value);
  const errors = [
    ...flattenValidationErrors(
      validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true }),
    ),
    ...checkTokenEntries(dto.tokens, env),
  ];
  if (errors.length > 0) return { ok: false, errors: sortByEntry(errors, 'tokens') };
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
