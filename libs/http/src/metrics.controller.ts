import { Controller, Get, Header, Inject, type OnModuleInit } from '@nestjs/common';
import { METRICS_REGISTRY } from '@tally/observability';
import { type Registry } from 'prom-client';
import { RequireAccess } from '@tally/auth';
import { metricsEverywhere, offerMetrics } from '@tally/cluster';

@Controller()
@RequireAccess('public')
export class MetricsController implements OnModuleInit {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  /** With several workers, the primary may ask this one for its series from now on. */
  onModuleInit(): void {
    offerMetrics(this.registry);
  }

  /**
   * Prometheus text exposition. With several workers: the sum over the workers (same names and
   * labels; gauges summed too), whichever worker answers. A restarted worker's counters start at 0.
   */
  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return metricsEverywhere(this.registry);
  }
}
