import { Module, type DynamicModule, type InjectionToken, type Provider } from '@nestjs/common';
import { relayConsumerName } from './consumer-name';
import { DenialRelay } from './denial-relay';
import { DenialStore } from './denial-store';
import { KafkaPublisher } from './kafka-publisher';
import { OutboxRelay } from './outbox-relay.service';
import { OutboxStreams } from './outbox-streams';
import { RecordSpans } from './record-spans';
import { RELAY_OPTIONS, RELAY_REDIS } from './outbox.constants';
import { RelayHealth } from './relay-health';
import { RelayLifecycle } from './relay-lifecycle';
import { createRelayRedis } from './relay-redis';
import { RelayMetrics } from './relay.metrics';
import { resolveRelayOptions, type RelayOptions, type ResolvedRelayOptions } from './relay.options';

export type OutboxModuleOptions =
  RelayOptions | { useFactory: (...deps: never[]) => RelayOptions; inject?: InjectionToken[] };

/**
 * The outbox relay. Needs, from the importing app: `LedgerModule.forRoot` (producer, provisioner,
 * admin) and `ObservabilityModule.forRoot` (metrics registry, health registry), both global.
 * The relay starts on application bootstrap and drains on shutdown.
 */
@Module({})
export class OutboxModule {
  static forRoot(options: OutboxModuleOptions): DynamicModule {
    const resolve = (o: RelayOptions): ResolvedRelayOptions => resolveRelayOptions(o, relayConsumerName);
    const optionsProvider: Provider =
      'useFactory' in options
        ? {
            provide: RELAY_OPTIONS,
            useFactory: (...deps: never[]) => resolve(options.useFactory(...deps)),
            inject: options.inject ?? [],
          }
        : { provide: RELAY_OPTIONS, useValue: resolve(options) };
    return {
      module: OutboxModule,
      providers: [
        optionsProvider,
        {
          provide: RELAY_REDIS,
          useFactory: (o: ResolvedRelayOptions) => createRelayRedis(o.redis),
          inject: [RELAY_OPTIONS],
        },
        OutboxStreams,
        DenialStore,
        RelayMetrics,
        RelayLifecycle,
        KafkaPublisher,
        DenialRelay,
        RelayHealth,
        RecordSpans,
        OutboxRelay,
      ],
      exports: [OutboxRelay],
    };
  }
}
