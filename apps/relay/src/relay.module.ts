import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, tracingSettings, type TallyConfig } from '@tally/config';
import { HttpModule, httpOptionsFrom } from '@tally/http';
import { LedgerModule } from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { OutboxModule } from '@tally/outbox';

/** Moves every shard's outbox stream to Kafka; health and metrics over HTTP. */
@Module({})
export class RelayModule {
  static forRoot(config: TallyConfig): DynamicModule {
    return {
      module: RelayModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRoot({ app: 'relay', tracing: tracingSettings(config, 'relay') }),
        HttpModule.forRoot(httpOptionsFrom(config)),
        LedgerModule.forRoot({ brokers: config.kafkaBrokers, clientId: 'tally-relay' }),
        OutboxModule.forRoot({
          redis: config.redis,
          shards: config.shards,
          topicPartitions: config.topicPartitions,
          topicReplication: config.topicReplication,
          claimMinIdleMs: config.relayClaimIdleMs,
          lingerMs: config.relayLingerMs,
          batchSize: config.relayBatchSize,
          compression: config.relayCompression,
        }),
      ],
    };
  }
}
