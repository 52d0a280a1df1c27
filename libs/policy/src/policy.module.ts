import { type DynamicModule, Global, type ModuleMetadata, Module, type Provider } from '@nestjs/common';
import { POLICY_MODULE_OPTIONS } from './policy.constants';
import type { PolicyModuleOptions } from './policy.options';
import { PolicyStore } from './policy.store';

/**
 * The policy set of one app. Global: the engine and the controllers share the one store that the app
 * configured; a second store would be a second, diverging policy set.
 */
@Global()
@Module({})
export class PolicyModule {
  static forRoot(options: PolicyModuleOptions): DynamicModule {
    return PolicyModule.with([{ provide: POLICY_MODULE_OPTIONS, useValue: options }]);
  }

  /** For options that come from another provider (the app's validated config). */
  static forRootAsync(options: {
    imports?: ModuleMetadata['imports'];
    inject?: (string | symbol | (abstract new (...args: never[]) => unknown))[];
    useFactory: (...args: never[]) => PolicyModuleOptions | Promise<PolicyModuleOptions>;
  }): DynamicModule {
    return {
      ...PolicyModule.with([
        { provide: POLICY_MODULE_OPTIONS, inject: options.inject ?? [], useFactory: options.useFactory },
      ]),
      imports: options.imports ?? [],
    };
  }

  private static with(optionsProviders: Provider[]): DynamicModule {
    return {
      module: PolicyModule,
      providers: [
        ...optionsProviders,
        {
          provide: PolicyStore,
          inject: [POLICY_MODULE_OPTIONS],
          // Loaded while the container is built: whoever receives the store can read `current`,
          // and an invalid file stops the boot with every error listed.
          useFactory: (options: PolicyModuleOptions) => {
            const store = new PolicyStore(options);
            store.load();
            if (options.watch) store.watch();
            return store;
          },
        },
      ],
      exports: [PolicyStore],
    };
  }
}
