import { SetMetadata } from '@nestjs/common';
import { ACCESS_KEY } from './http.constants';

/**
 * `caller`: a service asking for decisions or reading usage (any caller token, or the admin token).
 * `admin`: control endpoints (reload, state). `public`: health and metrics for probes and scrapers.
 */
export type Access = 'caller' | 'admin' | 'public';
export const RequireAccess = (access: Access): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS_KEY, access);
