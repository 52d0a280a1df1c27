import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import { type Access } from './access.decorator';
import { ApiError } from './api-error';
import { ACCESS_KEY, HTTP_OPTIONS } from './http.constants';
import { type HttpOptions } from './http.options';

/**
 * Every route is closed unless it says otherwise: a handler without `@RequireAccess` needs a caller
 * token. Tokens are compared in constant time so response timing says nothing about a near miss.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly callerTokens: Buffer[];
  private readonly adminToken?: Buffer;

  constructor(
    private readonly reflector: Reflector,
    @Inject(HTTP_OPTIONS) private readonly options: HttpOptions,
  ) {
    this.callerTokens = options.callerTokens.map((t) => Buffer.from(t));
    this.adminToken = options.adminToken ? Buffer.from(options.adminToken) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const access =
      this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'caller';
    if (access === 'public' || this.options.auth === 'none') return true;
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const presented = bearer(request.headers.authorization);
    if (!presented)
      throw new ApiError(401, 'auth.missing', 'an Authorization: Bearer <token> header is required');
    const isAdmin = this.adminToken !== undefined && safeEqual(presented, this.adminToken);
    if (access === 'admin') {
      if (isAdmin) return true;
      throw new ApiError(403, 'auth.forbidden', 'this endpoint needs the admin token');
    }
    if (isAdmin || this.callerTokens.some((t) => safeEqual(presented, t))) return true;
    throw new ApiError(401, 'auth.invalid', 'the bearer token is not accepted');
  }
}

function bearer(header: string | string[] | undefined): Buffer | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match ? Buffer.from(match[1]) : undefined;
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
