import { type DynamicModule, Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HealthController } from './health.controller';
import { HealthRegistry } from './health.registry';
import { MetricsController } from './metrics.controller';
import { APP_NAME, METRICS_REGISTRY } from './observability.constants';

/**
 * Health, readiness and Prometheus metrics for one app. Global so that any lib can register a
 * health check or a metric without each app re-exporting the registry.
 */
@Global()
@Module({})
export class ObservabilityModule {
  static forRoot(options: { app: string; defaultMetrics?: boolean }): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ app: options.app });
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
    return {
      module: ObservabilityModule,
      controllers: [HealthController, MetricsController],
      providers: [
        HealthRegistry,
        { provide: METRICS_REGISTRY, useValue: registry },
        { provide: APP_NAME, useValue: options.app },
      ],
      exports: [HealthRegistry, METRICS_REGISTRY, APP_NAME],
    };
  }
}
