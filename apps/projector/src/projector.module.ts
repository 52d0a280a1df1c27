import { join } from 'node:path';
import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, tracingSettings, type TallyConfig } from '@tally/config';
import { HttpModule, httpOptionsFrom, openApiController } from '@tally/http';
import { LedgerModule, TOPICS, ledgerTopicSpecs } from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { PROJECTOR_GROUP, ProjectionsModule, type ProjectorOptions } from '@tally/projections';
import { consoleWiring } from './console/console.wiring';
import { projectorDocument } from './projector.openapi';
import { ProjectionsController } from './projections.controller';

/** What the production wiring fixes and a test may replace (its own topics and group on a shared broker). */
export type ProjectorOverrides = Partial<
  Pick<ProjectorOptions, 'groupId' | 'topics' | 'topicSpecs' | 'sessionTimeoutMs' | 'lagPollMs'>
>;

/** Folds the Kafka ledger into projections; serves usage, top-keys and audit queries, and the operator console. */
@Module({})
export class ProjectorModule {
  static forRoot(config: TallyConfig, overrides: ProjectorOverrides = {}): DynamicModule {
    // The built console sits beside the built apps: dist/console (scripts/build.mjs).
    const operatorConsole = consoleWiring(config, join(__dirname, '../../../console'));
    return {
      module: ProjectorModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({ app: 'projector', tracing: tracingSettings(config, 'projector') }),
        HttpModule.forRoot(httpOptionsFrom(config)),
        LedgerModule.forRoot({ brokers: config.kafkaBrokers, clientId: PROJECTOR_GROUP }),
        ProjectionsModule.forRoot({
          redis: config.redis,
          groupId: PROJECTOR_GROUP,
          topics: {
            usage: TOPICS.usage,
            decision: TOPICS.decision,
            decisionV1: TOPICS.decisionV1,
            deadLetter: TOPICS.deadLetter,
          },
          topicSpecs: ledgerTopicSpecs({
            partitions: config.topicPartitions,
            replicationFactor: config.topicReplication,
          }),
          auditRetentionMs: config.auditRetentionMs,
          stepCells: config.projectorStepCells,
          maxWaitTimeMs: config.projectorFetchWaitMs,
          fetchMinBytes: config.projectorFetchMinBytes,
          commitIntervalMs: config.projectorCommitIntervalMs,
          ...overrides,
        }),
      ],
      controllers: [
        ProjectionsController,
        ...operatorConsole.controllers,
        openApiController(projectorDocument),
      ],
      providers: operatorConsole.providers,
    };
  }
}
