import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import type { TallyFailMode } from '../client.types';
import { QUOTA_METADATA } from './client.constants';
import { TallyGuard } from './tally.guard';

/**
 * What a route spends and who pays. Every function receives the framework's request object (Fastify's
 * request; other adapters are untested); a function that throws fails the request (500), it never skips the quota check.
 */
export interface QuotaOptions<Req = unknown> {
  /** `tenant`, `principal`, `token`, `client`, `route` of the caller, e.g. from headers or auth. */
  readonly selectors: (req: Req) => Readonly<Record<string, string>>;
  /** Units this request spends: a number or computed from the request. Default: 1 (the server's). */
  readonly cost?: number | ((req: Req) => number);
  /** Attributes for policy `match`/`unless`: fixed or computed. */
  readonly attributes?: Readonly<Record<string, string>> | ((req: Req) => Readonly<Record<string, string>>);
  /** Makes a client's retries replay one decision instead of spending twice (e.g. `Idempotency-Key`). */
  readonly idempotencyKey?: (req: Req) => string | undefined;
  /** Overrides the module's fail mode for this route (`local` needs the module's `localFallback`). */
  readonly failMode?: TallyFailMode;
}

/**
 * Puts a route (or every route of a controller) behind Tally: applies `TallyGuard` and tells it what
 * to ask. A method's `@Quota` wins over its controller's.
 */
export function Quota<Req = unknown>(options: QuotaOptions<Req>): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(QUOTA_METADATA, options), UseGuards(TallyGuard));
}
