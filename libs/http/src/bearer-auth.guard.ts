import { type CanActivate, type ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type Access } from './access.decorator';
import { ApiError } from './api-error';
import { BearerTokens } from './bearer-tokens';
import { ACCESS_KEY, GRANT_KEY, PER_TENANT_KEY } from './http.constants';
import { ForbiddenError } from './token-grant';

const NAMES_NO_TENANT = 'this call is not about one tenant: it needs a token without a tenant list';

/**
 * The header stage of every Nest route (see `BearerTokens`), and the tenant rule for routes that do
 * not judge the tenant themselves: a tenant-scoped token is refused there. Every route is closed
 * unless it says otherwise: a handler without `@RequireAccess` needs the admin role. The grant is left
 * on the request for `@Granted()`.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly logger = new Logger('auth');

  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: BearerTokens,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, targets) ?? 'admin';
    const perTenant = this.reflector.getAllAndOverride<boolean | undefined>(PER_TENANT_KEY, targets) ?? false;
    const request = context.switchToHttp().getRequest<{
      headers: Record<string, string | string[] | undefined>;
      url?: string;
      [GRANT_KEY]?: unknown;
    }>();
    const grant = this.tokens.authorize(request.headers.authorization, access);
    if (grant instanceof ApiError) throw this.logged(grant, request.url);
    if (access !== 'public' && !perTenant && grant.tenants !== undefined)
      throw this.logged(new ForbiddenError(NAMES_NO_TENANT, grant.name), request.url);
    request[GRANT_KEY] = grant;
    return true;
  }

  /**
   * A known token refused is a misconfiguration worth an operator's eye, and its owner is known (by
   * name). Unknown tokens (401) are not logged: anyone can send those, as fast as they like.
   */
  private logged(error: ApiError, url: string | undefined): ApiError {
    if (error instanceof ForbiddenError)
      this.logger.warn(`auth.forbidden: token ${error.tokenName} on ${routeOf(url)}: ${error.message}`);
    return error;
  }
}

/** The path only: a query string may hold anything a caller typed (a token, even). */
function routeOf(url: string | undefined): string {
  return (url ?? '').split('?')[0];
}
