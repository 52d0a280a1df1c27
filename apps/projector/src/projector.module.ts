import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, type TallyConfig } from '@tally/config';
import { HttpModule } from '@tally/http';
import { ObservabilityModule } from '@tally/observability';

/** Folds the Kafka ledger into projections; serves usage and audit queries. */
@Module({})
export class ProjectorModule {
  static forRoot(config: TallyConfig): DynamicModule {
    return {
      module: ProjectorModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({ app: 'projector' }),
        HttpModule.forRoot({
          auth: config.auth,
          callerTokens: config.apiTokens ?? [],
          adminToken: config.adminToken,
          maxInflight: config.maxInflight,
        }),
      ],
    };
  }
}
