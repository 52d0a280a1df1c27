import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * `caller`: a service asking for decisions or reading usage (any caller token, or the admin token).
 * `admin`: control endpoints (reload, state). `public`: health and metrics for probes and scrapers.
 */
export type Access = 'caller' | 'admin' | 'public';

/** The key of a route's access in its Fastify route config, where the route gate reads it. */
export const ACCESS_CONFIG_KEY = 'tallyAccess';

/** A Fastify route config that declares `access` (for routes registered on Fastify directly). */
export function accessConfig(access: Access): { readonly [ACCESS_CONFIG_KEY]: Access } {
  return { [ACCESS_CONFIG_KEY]: access };
}

/** The access a route config declares; a route that declares none needs a caller token. */
export function accessOf(config: unknown): Access {
  return (
    (config as Partial<Record<typeof ACCESS_CONFIG_KEY, Access>> | undefined)?.[ACCESS_CONFIG_KEY] ?? 'caller'
  );
}

/**
 * The access a Nest handler requires, on the handler or on its controller (a handler's own wins).
 * It is written into the handler's Fastify route config, which Nest hands to Fastify with the route,
 * so that the route gate can authenticate from the headers alone, before the body is read (a Nest
 * guard runs only after Fastify has read and parsed it). On a class, it is written onto every
 * handler that does not declare its own: TypeScript applies member decorators before class ones.
 */
export const RequireAccess = (access: Access): MethodDecorator & ClassDecorator =>
  ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      declare(descriptor.value as object, access);
      return descriptor;
    }
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown;
      if (name === 'constructor' || typeof method !== 'function') continue;
      if (declared(method) === undefined) declare(method, access);
    }
    return undefined;
  }) as MethodDecorator & ClassDecorator;

function declared(method: object): Access | undefined {
  const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method) as
    Partial<Record<typeof ACCESS_CONFIG_KEY, Access>> | undefined;
  return config?.[ACCESS_CONFIG_KEY];
}

function declare(method: object, access: Access): void {
  const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method) ?? {}) as object;
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, ...accessConfig(access) }, method);
}
