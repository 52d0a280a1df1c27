import { type DynamicModule, Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HealthRegistry } from './health.registry';
import { APP_NAME, EVENT_LOOP_SAMPLE_MS, METRICS_REGISTRY } from './observability.constants';
import { Tracing, type TracingOptions } from './tracing/tracing';

/**
 * The health and Prometheus registries of one app. Global so that any lib can register a health
 * check or a metric without each app re-exporting the registry. `/healthz`, `/readyz` and
 * `/metrics` are served by @tally/http's HttpModule, which reads these registries.
 */
@Global()
@Module({})
export class ObservabilityModule {
  /** `tracing`: the process's spans (docs/operations.md, "Traces"); absent: off. */
  static forRoot(options: {
    app: string;
    defaultMetrics?: boolean;
    tracing?: TracingOptions;
  }): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ app: options.app });
    if (options.defaultMetrics !== false)
      collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    return {
      module: ObservabilityModule,
      providers: [
        HealthRegistry,
        { provide: METRICS_REGISTRY, useValue: registry },
        { provide: APP_NAME, useValue: options.app },
        // A factory, not a value: Nest then calls its shutdown hook, which exports the last spans.
        {
          provide: Tracing,
          useFactory: () => (options.tracing ? Tracing.create(options.tracing) : Tracing.off()),
        },
      ],
      exports: [HealthRegistry, METRICS_REGISTRY, APP_NAME, Tracing],
    };
  }
}
