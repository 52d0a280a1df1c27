import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type Access } from './access.decorator';
import { BearerTokens } from './bearer-tokens';
import { ACCESS_KEY, HTTP_OPTIONS } from './http.constants';
import { type HttpOptions } from './http.options';

/**
 * Every route is closed unless it says otherwise: a handler without `@RequireAccess` needs a caller
 * token (see `BearerTokens` for the rule).
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly tokens: BearerTokens;

  constructor(
    private readonly reflector: Reflector,
    @Inject(HTTP_OPTIONS) options: HttpOptions,
  ) {
    this.tokens = new BearerTokens(options);
  }

  canActivate(context: ExecutionContext): boolean {
    const access =
      this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'caller';
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const refusal = this.tokens.refusal(request.headers.authorization, access);
    if (refusal) throw refusal;
    return true;
  }
}
