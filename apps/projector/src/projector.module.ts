import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, type TallyConfig } from '@tally/config';
import { HttpModule, httpOptionsFrom, openApiController } from '@tally/http';
import { LedgerModule, TOPICS, ledgerTopicSpecs } from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { PROJECTOR_GROUP, ProjectionsModule, type ProjectorOptions } from '@tally/projections';
import { projectorDocument } from './projector.openapi';
import { ProjectionsController } from './projections.controller';

/** What the production wiring fixes and a test may replace (its own topics and group on a shared broker). */
export type ProjectorOverrides = Partial<
  Pick<ProjectorOptions, 'groupId' | 'topics' | 'topicSpecs' | 'sessionTimeoutMs' | 'lagPollMs'>
>;

/** Folds the Kafka ledger into projections; serves usage, top-keys and audit queries. */
@Module({})
export class ProjectorModule {
  static forRoot(config: TallyConfig, overrides: ProjectorOverrides = {}): DynamicModule {
    return {
      module: ProjectorModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({ app: 'projector' }),
        HttpModule.forRoot(httpOptionsFrom(config)),
        LedgerModule.forRoot({ brokers: config.kafkaBrokers, clientId: PROJECTOR_GROUP }),
        ProjectionsModule.forRoot({
          redis: config.redis,
          groupId: PROJECTOR_GROUP,
          topics: { usage: TOPICS.usage, decision: TOPICS.decision, deadLetter: TOPICS.deadLetter },
          topicSpecs: ledgerTopicSpecs({
            partitions: config.topicPartitions,
            replicationFactor: config.topicReplication,
          }),
          auditRetentionMs: config.auditRetentionMs,
          stepCells: config.projectorStepCells,
          ...overrides,
        }),
      ],
      controllers: [ProjectionsController, openApiController(projectorDocument)],
    };
  }
}
