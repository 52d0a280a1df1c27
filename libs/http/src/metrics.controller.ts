import { Controller, Get, Header, Inject } from '@nestjs/common';
import { METRICS_REGISTRY } from '@tally/observability';
import { type Registry } from 'prom-client';
import { RequireAccess } from './access.decorator';

@Controller()
@RequireAccess('public')
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  /** Prometheus text exposition. */
  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
