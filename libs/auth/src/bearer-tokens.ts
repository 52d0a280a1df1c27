import { type Access } from './access.decorator';
import type { AuthOptions } from './auth.options';
import { ApiError } from '@tally/errors';
import { ConnectionGrants } from './connection-grants';
import { PeerGrants } from './peer-grants';
import { ForbiddenError, OPEN_GRANT, type TokenGrant } from './token-grant';
import { envTokenEntries, TokenSet } from './token-set';
import { type TokenSource } from './token.store';

/**
 * Who may call what, in two stages.
 *
 * 1. Header stage (`authorize`, `refusal`), from the `Authorization` header alone, before a body is
 *    read: the token is known (401 otherwise) and holds the role the route needs (403 otherwise).
 * 2. Tenant stage (`TokenGrant.tenantRefusal`), once the route knows the tenant (from the body, the
 *    query or gRPC descriptors): a tenant-scoped token acts only for its tenants (403 otherwise).
 *
 * Tokens are found by their SHA-256 digest, every entry compared in constant time (see `TokenSet`),
 * so response timing says nothing about a near miss. The tokens in force are the environment's simple
 * form plus, with `TALLY_TOKENS_FILE`, the file's, read live from the app's one `TokenStore`.
 */
export class BearerTokens {
  private readonly source: TokenSource;
  private readonly connections = new ConnectionGrants();
  private readonly peers = new PeerGrants();

  constructor(
    private readonly options: AuthOptions,
    /** The app's live store; required with a tokens file (HttpModule provides the instance). */
    source?: TokenSource,
  ) {
    if (source) this.source = source;
    else if (options.tokensFile !== undefined)
      throw new Error('BearerTokens: a tokens file is read by the HttpModule; inject BearerTokens instead');
    else
      this.source = {
        current: new TokenSet('env', envTokenEntries(options.callerTokens, options.adminToken)),
      };
  }

  /**
   * Header stage: the grant of the header's token when it may call a route needing `access`, else the
   * 401/403. With `connection` (the request's socket), a header this connection already had accepted
   * under the tokens in force is not hashed again (see `ConnectionGrants`).
   */
  authorize(
    authorization: string | string[] | undefined,
    access: Access,
    connection?: object,
  ): TokenGrant | ApiError {
    if (access === 'public' || this.options.auth === 'none') return OPEN_GRANT;
    const header = Array.isArray(authorization) ? authorization[0] : authorization;
    const set = this.source.current;
    let grant =
      connection !== undefined && header !== undefined
        ? this.connections.recall(connection, header, set)
        : undefined;
    if (grant === undefined) {
      const presented = bearer(header);
      if (presented === undefined)
        return new ApiError(401, 'auth.missing', 'an Authorization: Bearer <token> header is required');
      grant = set.find(presented);
      if (grant === undefined) return new ApiError(401, 'auth.invalid', 'the bearer token is not accepted');
      if (connection !== undefined && header !== undefined)
        this.connections.remember(connection, header, set, grant);
    }
    if (!grant.allows(access))
      return new ForbiddenError(`this call needs a token with the ${access} role`, grant.name);
    return grant;
  }

  /**
   * Header stage for a transport that names a connection by its peer (gRPC: `call.getPeer()`): as
   * `authorize`, with a header this peer already had accepted under the tokens in force recalled
   * instead of hashed again (see `PeerGrants`).
   */
  authorizePeer(header: string | undefined, access: Access, peer: string): TokenGrant | ApiError {
    if (access === 'public' || this.options.auth === 'none') return OPEN_GRANT;
    const set = this.source.current;
    let grant = header === undefined ? undefined : this.peers.recall(peer, header, set);
    if (grant === undefined) {
      const presented = bearer(header);
      if (header === undefined || presented === undefined)
        return new ApiError(401, 'auth.missing', 'an Authorization: Bearer <token> header is required');
      grant = set.find(presented);
      if (grant === undefined) return new ApiError(401, 'auth.invalid', 'the bearer token is not accepted');
      this.peers.remember(peer, header, set, grant);
    }
    if (!grant.allows(access))
      return new ForbiddenError(`this call needs a token with the ${access} role`, grant.name);
    return grant;
  }

  /** Header stage as a yes/no: the 401/403 to answer, or undefined when the header grants `access`. */
  refusal(authorization: string | string[] | undefined, access: Access): ApiError | undefined {
    const result = this.authorize(authorization, access);
    return result instanceof ApiError ? result : undefined;
  }
}

function bearer(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}
