import { readFile } from 'node:fs/promises';
import { compileTokenFile, tokenDigestHex } from '@tally/auth';
import type { FieldError } from '@tally/errors';
import { OpsError } from './ops.error';

/** As long as the environment's tokens must be: a token short enough to guess is no token. */
const MIN_TOKEN_LENGTH = 16;

/** What `tally tokens hash` prints: the digest, and with a name and roles a whole file entry. */
export interface TokenLine {
  readonly sha256: string;
  readonly name?: string;
  readonly roles?: readonly string[];
  readonly tenants?: readonly string[];
}

/**
 * The tokens-file entry of a token read from stdin, checked by the very rules the apps apply to the
 * file, so a printed entry is one they accept. The token itself is never printed or echoed in an
 * error: only its digest leaves. Without `name`, the digest line alone.
 *
 * @throws OpsError (usage) for a token no client could send as `Bearer <token>`, or an entry the file
 * rules refuse (each option named as it was given).
 */
export function tokenLine(
  stdin: string,
  entry: { name?: string; roles?: readonly string[]; tenants?: readonly string[] },
): TokenLine {
  // One trailing line break is how `echo` and editors end the token, not part of it.
  const token = stdin.replace(/\r?\n$/, '');
  if (token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token))
    throw new OpsError(
      `the token on stdin must be at least ${MIN_TOKEN_LENGTH} printable ASCII characters without spaces ` +
        `(got ${token.length} characters)`,
      true,
    );
  const sha256 = tokenDigestHex(token);
  if (entry.name === undefined && entry.roles === undefined && entry.tenants === undefined) return { sha256 };
  const line: TokenLine = {
    ...(entry.name === undefined ? {} : { name: entry.name }),
    sha256,
    ...(entry.roles === undefined ? {} : { roles: entry.roles }),
    ...(entry.tenants === undefined ? {} : { tenants: entry.tenants }),
  };
  const compiled = compileTokenFile(JSON.stringify({ tokens: [line] }), []);
  if (!compiled.ok) throw new OpsError(compiled.errors.map(asOption).join('\n'), true);
  return line;
}

/** `tokens[0].roles: …` → `--roles: …`: the operator typed options, not a file. */
function asOption(error: FieldError): string {
  return `${error.path.replace(/^tokens\[0\]\./, '--')}: ${error.message}`;
}

/** The entry as YAML to paste under `tokens:` (flow lists; tenants quoted, they may hold `:`). */
export function tokenLineYaml(line: TokenLine): string {
  if (line.name === undefined) return `sha256: ${line.sha256}`;
  const lines = [`- name: ${line.name}`, `  sha256: ${line.sha256}`];
  if (line.roles) lines.push(`  roles: [${line.roles.join(', ')}]`);
  if (line.tenants) lines.push(`  tenants: [${line.tenants.map((t) => JSON.stringify(t)).join(', ')}]`);
  return lines.join('\n');
}

export type TokensCheckResult =
  | {
      readonly ok: true;
      readonly file: string;
      readonly version: string;
      readonly tokens: { name: string; roles: string[]; tenants: string[] | null }[];
    }
  | { readonly ok: false; readonly file: string; readonly errors: FieldError[] };

/**
 * Validates a tokens file exactly as the apps do at boot and on reload (without the environment's
 * tokens, which only the apps know: a digest repeated there is caught when they read the file).
 */
export async function checkTokensFile(file: string): Promise<TokensCheckResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { ok: false, file, errors: [{ path: '(file)', message: (error as Error).message }] };
  }
  const compiled = compileTokenFile(text, []);
  if (!compiled.ok) return { ok: false, file, errors: compiled.errors };
  return {
    ok: true,
    file,
    version: compiled.set.version,
    tokens: compiled.set.entries.map(({ grant }) => ({
      name: grant.name,
      roles: [...grant.roles],
      tenants: grant.tenants ? [...grant.tenants] : null,
    })),
  };
}
