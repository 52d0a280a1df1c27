import { type TokenGrant } from './token-grant';
import { type TokenSet } from './token-set';

/** What a connection last presented and was granted, and under which token set. */
interface Remembered {
  readonly header: string;
  readonly set: TokenSet;
  readonly grant: TokenGrant;
}

/**
 * The grant each open connection's last accepted `Authorization` header earned, so that the next
 * request on a keep-alive connection with the same header skips the SHA-256 and the digest scan of
 * `TokenSet.find` (≈ 3 % of the decision API's CPU per request at a fixed rate). Why this is as safe
 * as hashing every time:
 * - only an accepted header is remembered, on the connection that sent it, and only until that
 *   connection closes (a WeakMap entry dies with its socket) or accepts another header: the raw
 *   token is never kept past the connection that carried it, and a stranger cannot fill the memo;
 * - the presented header is compared with the remembered one in constant time (`sameText`), so a
 *   near miss on a connection shared by several callers (a proxy's pool) times like any miss;
 * - a memo is valid for one `TokenSet` only: a reload (a revoked token) makes every memo stale, and
 *   the next request is judged on the new set.
 * The role check (`TokenGrant.allows`) and the tenant stage still run on every request.
 */
export class ConnectionGrants {
  private readonly byConnection = new WeakMap<object, Remembered>();

  /** The grant remembered for `connection` when it presents the same `header` under `set`. */
  recall(connection: object, header: string, set: TokenSet): TokenGrant | undefined {
    const remembered = this.byConnection.get(connection);
    if (remembered === undefined || remembered.set !== set) return undefined;
    return sameText(remembered.header, header) ? remembered.grant : undefined;
  }

  remember(connection: object, header: string, set: TokenSet, grant: TokenGrant): void {
    this.byConnection.set(connection, { header, set, grant });
  }
}

/**
 * Equality whose time depends on `known`'s length only, never on where `presented` differs: every
 * character is compared (a past-the-end `charCodeAt` is NaN, which `| 0` makes 0), and a length
 * difference alone is a mismatch.
 */
export function sameText(known: string, presented: string): boolean {
  let diff = known.length ^ presented.length;
  for (let i = 0; i < known.length; i++) diff |= known.charCodeAt(i) ^ (presented.charCodeAt(i) | 0);
  return diff === 0;
}
