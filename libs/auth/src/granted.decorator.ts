import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GRANT_KEY } from './auth.constants';
import { type TokenGrant } from './token-grant';

/**
 * The caller's `TokenGrant` as the route gate found it, for a handler that makes the tenant-stage check
 * (`@RequireAccess(role, { perTenant: true })`).
 */
export const Granted = createParamDecorator((_data: unknown, context: ExecutionContext): TokenGrant => {
  const request = context.switchToHttp().getRequest<{ [GRANT_KEY]?: TokenGrant }>();
  const grant = request[GRANT_KEY];
  // The gate runs before every non-public handler: no grant is a wiring bug, never "allowed".
  if (grant === undefined)
    throw new Error(
      'Granted: no grant on the request (is the route gate installed, and the route not public?)',
    );
  return grant;
});
