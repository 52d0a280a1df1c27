import { timingSafeEqual } from 'node:crypto';
import { type Access } from './access.decorator';
import { ApiError } from './api-error';
import { type HttpOptions } from './http.options';

/**
 * Who may call what, from the `Authorization` header: the rule of `BearerAuthGuard`, also used by
 * routes registered on Fastify directly (the decision hot path). Tokens are compared in constant time
 * so response timing says nothing about a near miss.
 */
export class BearerTokens {
  private readonly callerTokens: Buffer[];
  private readonly adminToken?: Buffer;

  constructor(private readonly options: Pick<HttpOptions, 'auth' | 'callerTokens' | 'adminToken'>) {
    this.callerTokens = options.callerTokens.map((t) => Buffer.from(t));
    this.adminToken = options.adminToken ? Buffer.from(options.adminToken) : undefined;
  }

  /** The 401/403 to answer, or undefined when the header grants `access`. */
  refusal(authorization: string | string[] | undefined, access: Access): ApiError | undefined {
    if (access === 'public' || this.options.auth === 'none') return undefined;
    const presented = bearer(authorization);
    if (!presented)
      return new ApiError(401, 'auth.missing', 'an Authorization: Bearer <token> header is required');
    const isAdmin = this.adminToken !== undefined && safeEqual(presented, this.adminToken);
    if (access === 'admin') {
      return isAdmin ? undefined : new ApiError(403, 'auth.forbidden', 'this endpoint needs the admin token');
    }
    if (isAdmin || matchesAny(presented, this.callerTokens)) return undefined;
    return new ApiError(401, 'auth.invalid', 'the bearer token is not accepted');
  }
}

function bearer(header: string | string[] | undefined): Buffer | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match ? Buffer.from(match[1]) : undefined;
}

/** Every token is compared, so timing does not say which one (or whether an early one) matched. */
function matchesAny(presented: Buffer, tokens: readonly Buffer[]): boolean {
  let ok = false;
  for (const t of tokens) ok = safeEqual(presented, t) || ok;
  return ok;
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
