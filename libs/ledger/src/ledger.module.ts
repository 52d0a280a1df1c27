import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { createLedger } from './kafkajs-ledger.factory';
import type { KafkaClientOptions } from './kafkajs-client.factory';
import {
  KAFKA_ADMIN,
  LEDGER,
  LEDGER_CONSUMER_FACTORY,
  LEDGER_PRODUCER,
  TOPIC_PROVISIONER,
} from './ledger.constants';
import type { Ledger } from './ledger.port';

export type LedgerModuleOptions = KafkaClientOptions;

/** The ports connect lazily; this closes them so SIGTERM leaves no member behind in a group. */
@Injectable()
class LedgerShutdown implements OnApplicationShutdown {
  constructor(@Inject(LEDGER) private readonly ledger: Ledger) {}

  onApplicationShutdown(): Promise<void> {
    return this.ledger.close();
  }
}

@Module({})
export class LedgerModule {
  static forRoot(options: LedgerModuleOptions): DynamicModule {
    return {
      module: LedgerModule,
      global: true,
      providers: [
        { provide: LEDGER, useFactory: () => createLedger(options) },
        { provide: LEDGER_PRODUCER, useFactory: (l: Ledger) => l.producer, inject: [LEDGER] },
        { provide: LEDGER_CONSUMER_FACTORY, useFactory: (l: Ledger) => l.consumers, inject: [LEDGER] },
        { provide: TOPIC_PROVISIONER, useFactory: (l: Ledger) => l.provisioner, inject: [LEDGER] },
        { provide: KAFKA_ADMIN, useFactory: (l: Ledger) => l.admin, inject: [LEDGER] },
        LedgerShutdown,
      ],
      exports: [LEDGER, LEDGER_PRODUCER, LEDGER_CONSUMER_FACTORY, TOPIC_PROVISIONER, KAFKA_ADMIN],
    };
  }
}
