import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, tracingSettings, type TallyConfig } from '@tally/config';
import { EngineModule, EngineService } from '@tally/engine';
import { HttpModule, httpOptionsFrom, openApiController, workerCount } from '@tally/http';
import { HealthRegistry, ObservabilityModule } from '@tally/observability';
import { PolicyModule, PolicyStore } from '@tally/policy';
import { DecisionMetrics, DecisionMetricsModule } from './decision-metrics';
import { DecisionsController } from './decisions.controller';
import { GrpcMetrics } from './grpc-metrics';
import { GrpcRlsServer } from './grpc-rls.server';
import { GrpcRlsService } from './grpc-rls.service';
import { decisionApiDocument } from './decision-api.openapi';
import { LeasesController } from './leases.controller';
import { OverridesController } from './overrides.controller';
import { PoliciesController } from './policies.controller';
import { PolicyReloadHistory } from './policy-reloads.history';

/** The hot path: decisions over HTTP (and Envoy RLS gRPC), control endpoints, health, metrics. */
@Module({})
export class DecisionApiModule {
  static forRoot(config: TallyConfig): DynamicModule {
    return {
      module: DecisionApiModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({
          app: 'decision-api',
          tracing: tracingSettings(config, 'decision-api'),
        }),
        HttpModule.forRoot(httpOptionsFrom(config)),
        PolicyModule.forRoot({ path: config.policiesPath, watch: true }),
        EngineModule.forRoot({
          options: {
            redis: config.redis,
            shards: config.shards,
            backendTimeoutMs: config.backendTimeoutMs,
            idempotencyTtlMs: config.idempotencyTtlMs,
            tokenSecret: config.tokenSecret,
            maxCost: config.maxCost,
            localFallback: {
              share:
                config.localFallbackShare === 'auto'
                  ? workerCount(config.workers)
                  : config.localFallbackShare,
              maxKeys: config.localFallbackMaxKeys,
            },
            overrideCache: {
              refreshMs: config.overrideCacheRefreshMs,
              maxEntries: config.overrideCacheMaxEntries,
            },
            ...(config.redisWaitReplicas > 0 && {
              replicaWait: { replicas: config.redisWaitReplicas, timeoutMs: config.redisWaitTimeoutMs },
            }),
          },
          policySource: PolicyStore,
          observer: DecisionMetrics,
          imports: [DecisionMetricsModule],
        }),
      ],
      controllers: [
        DecisionsController,
        LeasesController,
        PoliciesController,
        OverridesController,
        openApiController(decisionApiDocument),
      ],
      providers: [
        GrpcMetrics,
        PolicyReloadHistory,
        GrpcRlsService,
        GrpcRlsServer,
        {
          provide: 'READINESS',
          inject: [HealthRegistry, EngineService, PolicyStore],
          useFactory: (health: HealthRegistry, engine: EngineService, store: PolicyStore) => {
            health.register('redis', () => {
              const h = engine.health();
              const status = h.status === 'healthy' ? 'up' : h.status === 'degraded' ? 'degraded' : 'down';
              const open = Object.entries(h.nodes).filter(([, state]) => state !== 'closed');
              const breakers =
                open.length === 0 ? 'closed' : open.map(([node, state]) => `${state} on ${node}`).join(', ');
              return { status, detail: `breaker ${breakers}, connection ${h.connection}` };
            });
            health.register('policies', () => ({ status: 'up', detail: `version ${store.current.version}` }));
            return true;
          },
        },
      ],
    };
  }
}
