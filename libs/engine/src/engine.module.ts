import {
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type Provider,
} from '@nestjs/common';
import type { DecisionObserver } from './decision-observer';
import { DecisionService } from './decision.service';
import { DegradedLedger } from './failure/degraded-ledger';
import {
  DECISION_OBSERVER,
  DECISION_STORE,
  DEGRADED_OUTBOX,
  ENGINE_OPTIONS,
  ENGINE_REDIS,
  LEASE_STORE,
  POLICY_SET_SOURCE,
} from './engine.constants';
import type { EngineOptions, PolicySetSource } from './engine.options';
import { EngineService } from './store/engine.service';
import { LeaseService } from './leases/lease.service';
import { localFallbackOf, LocalFallback } from './failure/local-fallback';
import { createRedisClient } from '@tally/redis';
import { OverridesService } from './overrides/overrides.service';
import { OverridesStore } from './overrides/overrides.store';
import { OverridesCache } from './overrides/overrides.cache';

export interface EngineModuleOptions {
  /** Modules that export the providers named by `policySource` / `observer` / `inject`. */
  readonly imports?: ModuleMetadata['imports'];
  /** Engine settings, directly or from a factory (e.g. from TALLY_CONFIG). */
  readonly options:
    EngineOptions | { useFactory: (...deps: never[]) => EngineOptions; inject?: InjectionToken[] };
  /** The policy set in force: a provider token (e.g. the policy store) or an object (tests). */
  readonly policySource: InjectionToken | PolicySetSource;
  /** Optional metrics observer: a provider token or an object. */
  readonly observer?: InjectionToken | DecisionObserver;
}

function isObjectValue(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function bind(token: symbol, source: unknown): Provider {
  return isObjectValue(source)
    ? { provide: token, useValue: source }
    : { provide: token, useExisting: source as InjectionToken };
}

/**
 * The decision engine: `DecisionService` (the use case), `EngineService` (Redis, deadlines,
 * breaker, health) and `DegradedLedger` (degraded decisions into the outbox once Redis is back). The
 * Redis client is created here and closed with the module, after the ledger's last flush.
 *
 * The wiring lives here and only here: the Redis store is bound to the ports the use cases name
 * (`DECISION_STORE`, `LEASE_STORE`, `DEGRADED_OUTBOX`), and the local fallback is built once with
 * this process's override copy, so a block held in the copy still refuses while Redis fails.
 */
@Module({})
export class EngineModule {
  static forRoot(def: EngineModuleOptions): DynamicModule {
    const optionsProvider: Provider =
      'useFactory' in def.options
        ? { provide: ENGINE_OPTIONS, useFactory: def.options.useFactory, inject: def.options.inject ?? [] }
        : { provide: ENGINE_OPTIONS, useValue: def.options };
    const providers: Provider[] = [
      optionsProvider,
      {
        provide: ENGINE_REDIS,
        useFactory: (o: EngineOptions) => createRedisClient(o.redis, 'hot-path'),
        inject: [ENGINE_OPTIONS],
      },
      bind(POLICY_SET_SOURCE, def.policySource),
      EngineService,
      { provide: DECISION_STORE, useExisting: EngineService },
      { provide: LEASE_STORE, useExisting: EngineService },
      { provide: DEGRADED_OUTBOX, useExisting: EngineService },
      {
        provide: LocalFallback,
        useFactory: (o: EngineOptions, overrides: OverridesCache, observer?: DecisionObserver) =>
          localFallbackOf(o, observer, overrides),
        inject: [ENGINE_OPTIONS, OverridesCache, { token: DECISION_OBSERVER, optional: true }],
      },
      DegradedLedger,
      DecisionService,
      LeaseService,
      OverridesStore,
      OverridesService,
      OverridesCache,
    ];
    if (def.observer !== undefined) providers.push(bind(DECISION_OBSERVER, def.observer));
    return {
      module: EngineModule,
      imports: def.imports ?? [],
      providers,
      exports: [
        DecisionService,
        EngineService,
        DegradedLedger,
        LeaseService,
        OverridesService,
        OverridesCache,
      ],
    };
  }
}
