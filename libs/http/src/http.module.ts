import { type DynamicModule, Global, Module, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BearerTokens, envTokenEntries, TokenStore } from '@tally/auth';
import { HealthController } from './health.controller';
import { HTTP_OPTIONS, TOKEN_STORE } from './http.constants';
import { type HttpOptions } from './http.options';
import { MetricsController } from './metrics.controller';
import { ProblemFilter } from './problem.filter';
import { TokenReloadMetrics } from './token-reload.metrics';
import { TokensController } from './tokens.controller';

/** Stops the file watch with the app. */
class TokenWatchCloser implements OnModuleDestroy {
  constructor(private readonly store: TokenStore) {}
  onModuleDestroy(): void {
    this.store.close();
  }
}

/**
 * Auth and the error contract, shared by the decision API, the projector's query API and the relay,
 * and the endpoints every app serves: `/healthz`, `/readyz` and `/metrics` (they read the registries
 * of `ObservabilityModule.forRoot`, which every app imports too).
 * One `BearerTokens` per app (exported: hot routes and gRPC inject it). With a tokens file, the file
 * is read here, when the module is declared — an invalid file throws `TokensLoadError` with every
 * error before anything starts — and watched once the app runs. Authentication itself is a hook of
 * each route, installed by `createHttpApp` (see route-gate.ts): it must run before Fastify reads a
 * body, which a Nest guard cannot.
 */
@Global()
@Module({})
export class HttpModule {
  static forRoot(options: HttpOptions): DynamicModule {
    const store = options.tokensFile === undefined ? undefined : tokenStore(options, options.tokensFile);
    const tokenProviders: Provider[] = store
      ? [
          { provide: TOKEN_STORE, useValue: store },
          {
            provide: TokenWatchCloser,
            useFactory: () => {
              store.watch();
              return new TokenWatchCloser(store);
            },
          },
          TokenReloadMetrics,
        ]
      : [];
    return {
      module: HttpModule,
      controllers: [HealthController, MetricsController, ...(store ? [TokensController] : [])],
      providers: [
        { provide: HTTP_OPTIONS, useValue: options },
        { provide: BearerTokens, useValue: new BearerTokens(options, store) },
        ...tokenProviders,
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
      exports: [HTTP_OPTIONS, BearerTokens],
    };
  }
}

function tokenStore(options: HttpOptions, path: string): TokenStore {
  const store = new TokenStore(path, envTokenEntries(options.callerTokens, options.adminToken));
  store.load();
  return store;
}
