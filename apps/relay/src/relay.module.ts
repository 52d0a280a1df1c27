import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, type TallyConfig } from '@tally/config';
import { HttpModule } from '@tally/http';
import { ObservabilityModule } from '@tally/observability';

/** Moves every shard's outbox stream to Kafka; health and metrics over HTTP. */
@Module({})
export class RelayModule {
  static forRoot(config: TallyConfig): DynamicModule {
    return {
      module: RelayModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({ app: 'relay' }),
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
