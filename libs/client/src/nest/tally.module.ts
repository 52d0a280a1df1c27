import {
  type DynamicModule,
  Global,
  type InjectionToken,
  Module,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import type { TallyClientOptions } from '../client.types';
import { TALLY_OPTIONS } from './client.constants';
import { TallyClient } from '../tally.client';
import { TallyGuard } from './tally.guard';

/** `TallyModule.forRoot` options: the client's. */
export type TallyModuleOptions = TallyClientOptions;

export interface TallyModuleAsyncOptions {
  readonly imports?: ModuleMetadata['imports'];
  readonly useFactory: (...deps: never[]) => TallyModuleOptions | Promise<TallyModuleOptions>;
  readonly inject?: InjectionToken[];
}

/**
 * Provides one `TallyClient` (one keep-alive pool) and `TallyGuard` to the whole app, so `@Quota`
 * works in any module. Global: a quota check is a cross-cutting concern, like auth.
 */
@Global()
@Module({})
export class TallyModule implements OnApplicationShutdown {
  constructor(private readonly client: TallyClient) {}

  static forRoot(options: TallyModuleOptions): DynamicModule {
    return TallyModule.build([], { provide: TALLY_OPTIONS, useValue: options });
  }

  static forRootAsync(options: TallyModuleAsyncOptions): DynamicModule {
    return TallyModule.build(options.imports ?? [], {
      provide: TALLY_OPTIONS,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    });
  }

  private static build(
    imports: NonNullable<ModuleMetadata['imports']>,
    optionsProvider: Provider,
  ): DynamicModule {
    return {
      module: TallyModule,
      imports,
      providers: [
        optionsProvider,
        {
          provide: TallyClient,
          useFactory: (o: TallyModuleOptions) => new TallyClient(o),
          inject: [TALLY_OPTIONS],
        },
        TallyGuard,
      ],
      exports: [TallyClient, TallyGuard],
    };
  }

  onApplicationShutdown(): void {
    this.client.close();
  }
}
