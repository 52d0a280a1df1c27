import { hash, timingSafeEqual } from 'node:crypto';
import { type Role } from './access.decorator';
import { TokenGrant } from './token-grant';

/** One accepted token: the SHA-256 of its text (never the text) and what it may do. */
export interface TokenEntry {
  /** 32 bytes. */
  readonly digest: Buffer;
  readonly grant: TokenGrant;
}

/** SHA-256 of a token's UTF-8 text, hex: what a tokens file lists (`tally tokens hash` prints it). */
export function tokenDigestHex(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * The tokens in force: the environment's simple form and the tokens file, as one list. Lookups
 * compare digests, not texts: a digest has a fixed length (no length leak) and the file never holds
 * a token that could be read off a disk or a backup.
 */
export class TokenSet {
  constructor(
    /** Content hash of the tokens file (`env` without one): what `POST /v1/tokens:reload` reports. */
    readonly version: string,
    readonly entries: readonly TokenEntry[],
  ) {}

  /**
   * The grant of `presented`, or `undefined`. Every entry is compared, in constant time each, so the
   * time taken says neither which entry matched nor whether an early one did.
   */
  find(presented: string): TokenGrant | undefined {
    const digest = hash('sha256', presented, 'buffer');
    let found: TokenGrant | undefined;
    for (const entry of this.entries) if (timingSafeEqual(digest, entry.digest)) found = entry.grant;
    return found;
  }
}

/** The simple form's roles: a caller token decides and queries on every tenant; the admin token administers. */
const CALLER_ROLES: ReadonlySet<Role> = new Set(['decide', 'query']);
const ADMIN_ROLES: ReadonlySet<Role> = new Set(['admin']);

/**
 * `TALLY_API_TOKENS` and `TALLY_ADMIN_TOKEN` as entries, named after their variable (logs never show
 * a token). That the admin token differs from every caller token is checked by the config at boot.
 */
export function envTokenEntries(callerTokens: readonly string[], adminToken?: string): TokenEntry[] {
  const entries = callerTokens.map((token, i) => ({
    digest: hash('sha256', token, 'buffer'),
    grant: new TokenGrant(`TALLY_API_TOKENS[${i}]`, CALLER_ROLES),
  }));
  if (adminToken !== undefined)
    entries.push({
      digest: hash('sha256', adminToken, 'buffer'),
      grant: new TokenGrant('TALLY_ADMIN_TOKEN', ADMIN_ROLES),
    });
  return entries;
}
