import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type InjectionToken,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { HealthRegistry } from '@tally/observability';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { ProjectionNamespaces } from './namespaces/projection-namespaces';
import { ProjectionQueries } from './queries/projection.queries';
import { ProjectionStore } from './sink/projection.store';
import { PROJECTION_CLOCK, PROJECTION_REDIS, PROJECTOR_OPTIONS } from './projections.constants';
import { ProjectorBatchHandler } from './runtime/projector-batch.handler';
import { ProjectorLag } from './runtime/projector.lag';
import { ProjectorMetrics } from './runtime/projector.metrics';
import {
  resolveProjectorOptions,
  type ProjectorOptions,
  type ResolvedProjectorOptions,
} from './runtime/projector.options';
import { ProjectorPositions } from './runtime/projector.positions';
import { Projector } from './runtime/projector.service';

export type ProjectionsModuleOptions =
  ProjectorOptions | { useFactory: (...deps: never[]) => ProjectorOptions; inject?: InjectionToken[] };

/** Readiness of the projector: Redis, Kafka, and whether this member has joined its group. */
@Injectable()
class ProjectorHealth implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly health: HealthRegistry,
    @Inject(PROJECTION_REDIS) private readonly redis: RedisClient,
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    private readonly projector: Projector,
    private readonly lag: ProjectorLag,
  ) {}

  onModuleInit(): void {
    this.health.register('redis', async () => {
      await this.redis.ping();
      return { status: 'up' };
    });
    if (!this.options.consume) return;
    this.health.register('kafka', () => this.lag.health());
    this.health.register('consumer', () => this.projector.health());
  }

  /** After every beforeApplicationShutdown hook: the consumer has finished its last batch by now. */
  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
    this.redis.disconnect();
  }
}

/**
 * Projections: the Redis sink, the namespaces, the query reads, and (unless `consume: false`) the projector, a member
 * of the consumer group that folds the ledger into the active namespace. Needs, from the importing
 * app: `LedgerModule.forRoot` and `ObservabilityModule.forRoot` (both global).
 */
@Module({})
export class ProjectionsModule {
  static forRoot(options: ProjectionsModuleOptions): DynamicModule {
    const optionsProvider: Provider =
      'useFactory' in options
        ? {
            provide: PROJECTOR_OPTIONS,
            useFactory: (...deps: never[]) => resolveProjectorOptions(options.useFactory(...deps)),
            inject: options.inject ?? [],
          }
        : { provide: PROJECTOR_OPTIONS, useValue: resolveProjectorOptions(options) };
    return {
      module: ProjectionsModule,
      providers: [
        optionsProvider,
        {
          provide: PROJECTION_REDIS,
          useFactory: (o: ResolvedProjectorOptions) =>
            createRedisClient(o.redis, 'worker', 'tally-projector'),
          inject: [PROJECTOR_OPTIONS],
        },
        { provide: PROJECTION_CLOCK, useValue: () => Date.now() },
        {
          provide: ProjectionStore,
          useFactory: (redis: RedisClient, o: ResolvedProjectorOptions) =>
            new ProjectionStore(redis, { auditRetentionMs: o.auditRetentionMs, dedupTtlMs: o.dedupTtlMs }),
          inject: [PROJECTION_REDIS, PROJECTOR_OPTIONS],
        },
        {
          provide: ProjectionNamespaces,
          useFactory: (redis: RedisClient) => new ProjectionNamespaces(redis),
          inject: [PROJECTION_REDIS],
        },
        {
          provide: ProjectionQueries,
          useFactory: (redis: RedisClient, clock: () => number) => new ProjectionQueries(redis, clock),
          inject: [PROJECTION_REDIS, PROJECTION_CLOCK],
        },
        ProjectorMetrics,
        ProjectorPositions,
        ProjectorBatchHandler,
        Projector,
        ProjectorLag,
        ProjectorHealth,
      ],
      exports: [ProjectionStore, ProjectionNamespaces, ProjectionQueries, Projector],
    };
  }
}
