import { Controller, Get } from '@nestjs/common';
import { RequireAccess } from '@tally/http';
import { decisionApiDocument } from './decision-api.openapi';

/** `GET /openapi.json`: the published contract, built once at boot from the contract's schemas. */
@Controller()
@RequireAccess('public')
export class OpenApiController {
  private readonly document = decisionApiDocument();

  @Get('openapi.json')
  serve(): Record<string, unknown> {
    return this.document;
  }
}
