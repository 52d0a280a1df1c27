import { sameText } from './connection-grants';
import { type TokenGrant } from './token-grant';
import { type TokenSet } from './token-set';

/** What a peer last presented and was granted. */
interface Remembered {
  readonly header: string;
  readonly grant: TokenGrant;
}

/** Peers remembered at most; the oldest is forgotten first. Envoy keeps a few connections per host. */
export const MAX_PEERS = 4096;

/**
 * `ConnectionGrants` for a transport that names its connections by a string rather than handing out
 * the socket: gRPC, whose calls know their peer (`address:port`, one per HTTP/2 connection while it
 * is open) but not their session. Each RLS call would otherwise hash its `authorization` metadata
 * twice (the call gate, then the tenant stage). Why this is as safe as hashing every time:
 * - only an accepted header is remembered, under the peer that sent it; a stranger cannot fill it;
 * - the presented header is compared with the peer's remembered one in constant time (`sameText`),
 *   so a near miss times like any miss; a peer address reused by a later connection earns nothing
 *   the exact same header would not earn anyway;
 * - it is valid for one `TokenSet` only: when the set in force changes (a reload, a revoked token)
 *   everything remembered is dropped before the next header is judged, raw tokens included;
 * - it is bounded (`MAX_PEERS`, oldest first), so peers that come and go cannot grow it.
 * A closed connection's entry stays until then: the raw header of an accepted token outlives its
 * connection by at most that, in this process's memory.
 */
export class PeerGrants {
  private readonly byPeer = new Map<string, Remembered>();
  private set?: TokenSet;

  constructor(private readonly maxPeers = MAX_PEERS) {}

  /** The grant remembered for `peer` when it presents the same `header` under `set`. */
  recall(peer: string, header: string, set: TokenSet): TokenGrant | undefined {
    if (set !== this.set) {
      this.forget(set);
      return undefined;
    }
    const remembered = this.byPeer.get(peer);
    if (remembered === undefined) return undefined;
    return sameText(remembered.header, header) ? remembered.grant : undefined;
  }

  remember(peer: string, header: string, set: TokenSet, grant: TokenGrant): void {
    if (set !== this.set) this.forget(set);
    // Re-inserted last: the Map's order is then the order of last acceptance.
    this.byPeer.delete(peer);
    if (this.byPeer.size >= this.maxPeers) {
      const oldest = this.byPeer.keys().next();
      if (oldest.done !== true) this.byPeer.delete(oldest.value);
    }
    this.byPeer.set(peer, { header, grant });
  }

  /** Peers remembered now (tests, metrics). */
  get size(): number {
    return this.byPeer.size;
  }

  private forget(set: TokenSet): void {
    this.byPeer.clear();
    this.set = set;
  }
}
