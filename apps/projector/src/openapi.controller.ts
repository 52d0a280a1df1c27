import { Controller, Get } from '@nestjs/common';
import { RequireAccess } from '@tally/http';
import { projectorDocument } from './projector.openapi';

/** `GET /openapi.json`: the projector's published contract, built once at boot from the contract's schemas. */
@Controller()
@RequireAccess('public')
export class OpenApiController {
  private readonly document = projectorDocument();

  @Get('openapi.json')
  serve(): Record<string, unknown> {
    return this.document;
  }
}
