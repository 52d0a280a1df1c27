import 'reflect-metadata';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { describe, expect, it } from 'vitest';
import { accessOf, RequireAccess } from './access.decorator';

const routeConfig = (method: unknown): unknown =>
  Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, method as object);

describe(RequireAccess.name, () => {
  @RequireAccess('admin')
  class Controller {
    inherits(): void {}

    @RequireAccess('public')
    overrides(): void {}
  }
  class Undeclared {
    handler(): void {}
  }

  it("writes the controller's access into the route config of each handler", () => {
    expect(accessOf(routeConfig(Controller.prototype.inherits))).toEqual({
      access: 'admin',
      perTenant: false,
    });
  });

  it("lets a handler's own access win over its controller's", () => {
    expect(accessOf(routeConfig(Controller.prototype.overrides))).toEqual({
      access: 'public',
      perTenant: false,
    });
  });

  it('leaves a route that declares nothing closed: it needs the admin role', () => {
    expect(routeConfig(Undeclared.prototype.handler)).toBeUndefined();
    expect(accessOf(undefined)).toEqual({ access: 'admin', perTenant: false });
  });

  it('carries perTenant for handlers that judge the tenant themselves', () => {
    class Queries {
      @RequireAccess('query', { perTenant: true })
      usage(): void {}
    }
    expect(accessOf(routeConfig(Queries.prototype.usage))).toEqual({ access: 'query', perTenant: true });
  });
});
