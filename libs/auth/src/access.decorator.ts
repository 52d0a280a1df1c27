import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * What a token may do: ask for decisions, read usage and audit, operate the service, read or change
 * runtime overrides (`overrides:write` implies `overrides:read`; `admin` implies both), or run the
 * operator console (`console`: `query` and `admin` in one token, never `decide`).
 */
export const ROLES = ['decide', 'query', 'admin', 'overrides:read', 'overrides:write', 'console'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a route needs from the `Authorization` header:
 * - a role: a token that holds it (`decide` → decisions, `query` → projector queries, `admin` →
 *   control endpoints);
 * - `public`: nothing (health and metrics, for probes and scrapers);
 * - `caller`: any accepted token, whatever its roles.
 */
export type Access = Role | 'public' | 'caller';

export interface AccessOptions {
  /**
   * The handler judges the tenant itself, once it has read it (`TokenGrant.tenantRefusal`). Without
   * this a tenant-scoped token is refused at once: a call that names no tenant may read or change
   * every tenant's state, so it needs a token without a tenant list.
   */
  readonly perTenant?: boolean;
}

/** What the route gate reads from a route's Fastify config. */
export interface RouteAccess {
  readonly access: Access;
  readonly perTenant: boolean;
}

/** The key of a route's access in its Fastify route config, where the route gate reads it. */
export const ACCESS_CONFIG_KEY = 'tallyAccess';

/** A Fastify route config that declares `access` (for routes registered on Fastify directly). */
export function accessConfig(
  access: Access,
  options: AccessOptions = {},
): { readonly [ACCESS_CONFIG_KEY]: RouteAccess } {
  return { [ACCESS_CONFIG_KEY]: { access, perTenant: options.perTenant === true } };
}

/**
 * The access a route config declares. A route that declares none needs the admin role: every route
 * is closed unless it says otherwise.
 */
export function accessOf(config: unknown): RouteAccess {
  return (
    (config as Partial<Record<typeof ACCESS_CONFIG_KEY, RouteAccess>> | undefined)?.[ACCESS_CONFIG_KEY] ?? {
      access: 'admin',
      perTenant: false,
    }
  );
}

/**
 * The access a Nest handler requires, on the handler or on its controller (a handler's own wins).
 * It is written into the handler's Fastify route config, which Nest hands to Fastify with the route,
 * so that the route gate can authenticate from the headers alone, before the body is read (a Nest
 * guard runs only after Fastify has read and parsed it). On a class, it is written onto every
 * handler that does not declare its own: TypeScript applies member decorators before class ones.
 */
export const RequireAccess = (
  access: Access,
  options: AccessOptions = {},
): MethodDecorator & ClassDecorator =>
  ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      declare(descriptor.value as object, access, options);
      return descriptor;
    }
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown;
      if (name === 'constructor' || typeof method !== 'function') continue;
      if (declared(method) === undefined) declare(method, access, options);
    }
    return undefined;
  }) as MethodDecorator & ClassDecorator;

function declared(method: object): RouteAccess | undefined {
  const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method) as
    Partial<Record<typeof ACCESS_CONFIG_KEY, RouteAccess>> | undefined;
  return config?.[ACCESS_CONFIG_KEY];
}

function declare(method: object, access: Access, options: AccessOptions): void {
  const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method) ?? {}) as object;
  Reflect.defineMetadata(
    FASTIFY_ROUTE_CONFIG_METADATA,
    { ...config, ...accessConfig(access, options) },
    method,
  );
}
