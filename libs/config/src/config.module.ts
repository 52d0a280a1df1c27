import { DynamicModule, Global, Module } from '@nestjs/common';
import { TALLY_CONFIG } from './config.constants';
import { TallyConfig } from './tally.config';

/**
 * Provides the already-validated config. `main.ts` calls `loadConfig()` before creating the app,
 * so a bad environment fails with the full list of problems before any module starts.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: TallyConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: TALLY_CONFIG, useValue: config }],
      exports: [TALLY_CONFIG],
    };
  }
}
