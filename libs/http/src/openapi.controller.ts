import { Controller, Get, type Type } from '@nestjs/common';
import { RequireAccess } from '@tally/auth';

/**
 * `GET /openapi.json` of an app: its published contract, built once at boot by `build` (the app's
 * document, from the contract's schemas). A factory, as each app serves its own document.
 */
export function openApiController(build: () => Record<string, unknown>): Type<unknown> {
  @Controller()
  @RequireAccess('public')
  class OpenApiController {
    private readonly document = build();

    @Get('openapi.json')
    serve(): Record<string, unknown> {
      return this.document;
    }
  }
  return OpenApiController;
}
