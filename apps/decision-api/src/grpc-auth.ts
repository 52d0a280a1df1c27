import { status } from '@grpc/grpc-js';
import { type DecisionRequest } from '@tally/engine';
import { firstValue, type AuthRefusal } from '@tally/envoy-rls';
import { ApiError } from '@tally/errors';
import type { BearerTokens, TokenGrant } from '@tally/auth';

/** A refusal as the gRPC status Envoy sees. */
export interface GrpcRefusal {
  readonly code: status;
  readonly message: string;
}

/**
 * The caller check of the gRPC API: exactly the HTTP rule (`BearerTokens`: the token by its digest in
 * constant time, the `decide` role, then the token's tenants; `TALLY_AUTH=none` lets everything
 * through), read from the `authorization` metadata. Envoy sends the token via
 * `grpc_service.initial_metadata`. 401 → UNAUTHENTICATED, 403 → PERMISSION_DENIED.
 */
export class GrpcCallerAuth {
  constructor(private readonly tokens: BearerTokens) {}

  /**
   * Header stage, from metadata alone (before the descriptors are read): the grant, or the refusal.
   * `header`: the `authorization` metadata (gRPC allows it to repeat; the first counts). `peer`: the
   * call's connection (`address:port`); a header this peer had accepted under the tokens in force is
   * then recalled, not hashed again (`BearerTokens.authorizePeer`).
   */
  authorize(header: string | string[] | undefined, peer?: string): TokenGrant | GrpcRefusal {
    const value = firstValue(header);
    const result =
      peer === undefined
        ? this.tokens.authorize(value, 'decide')
        : this.tokens.authorizePeer(value, 'decide', peer);
    if (!(result instanceof ApiError)) return result;
    return result.getStatus() === 403
      ? { code: status.PERMISSION_DENIED, message: result.message }
      : {
          code: status.UNAUTHENTICATED,
          message: 'an authorization: Bearer <token> metadata entry with an accepted token is required',
        };
  }

  /**
   * The header stage as the call gate asks it: the refusal (UNAUTHENTICATED, or PERMISSION_DENIED for
   * a token without `decide`), or undefined when the call may go on to read its descriptors.
   */
  headerRefusal(header: string | string[] | undefined, peer?: string): AuthRefusal | undefined {
    const result = this.authorize(header, peer);
    if (!isRefusal(result)) return undefined;
    const code = result.code === status.PERMISSION_DENIED ? status.PERMISSION_DENIED : status.UNAUTHENTICATED;
    return { code, details: result.message };
  }

  /**
   * Tenant stage, once the descriptors are mapped to decisions (the tenant of each is its `tenant`
   * entry, as the mapper builds selectors). RLS has no per-descriptor refusal, so one descriptor out
   * of the token's tenants refuses the whole call; Envoy sends the descriptors of one request, which
   * in practice share a tenant.
   */
  tenantRefusal(grant: TokenGrant, requests: readonly DecisionRequest[]): GrpcRefusal | undefined {
    for (const request of requests) {
      const refusal = grant.tenantRefusal((request.selectors as Record<string, unknown>).tenant);
      if (refusal) return { code: status.PERMISSION_DENIED, message: refusal.message };
    }
    return undefined;
  }
}

export function isRefusal(value: TokenGrant | GrpcRefusal): value is GrpcRefusal {
  return 'code' in value;
}
