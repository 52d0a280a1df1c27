import { Inject, Injectable, type OnApplicationShutdown, type Provider, type Type } from '@nestjs/common';
import { type TallyConfig } from '@tally/config';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { ConsoleAssetsController } from './console-assets.controller';
import { ConsoleSampler } from './console-sampler';
import { CONSOLE_OPTIONS, CONSOLE_REDIS, type ConsoleOptions } from './console.constants';
import { OverviewController } from './overview.controller';
import { PipelineController } from './pipeline.controller';
import { PolicyPreviewController } from './policy-preview.controller';

@Injectable()
class ConsoleRedisShutdown implements OnApplicationShutdown {
  constructor(@Inject(CONSOLE_REDIS) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * The operator console, served by the projector (ADR 0007): its static assets at `/console` and the
 * read and control calls its pages make that no query endpoint answered before. Wiring only: the work
 * is `@tally/ops`'s (consumers, simulate, dead letters) and `@tally/projections`'s (namespaces). Part
 * of the projector's own module (not a module of its own): it calls the projector's
 * `ProjectionNamespaces`, and importing `ProjectionsModule` twice would start a second projector.
 */
export function consoleWiring(
  config: TallyConfig,
  assetsDir: string,
): { controllers: Type[]; providers: Provider[] } {
  const options: ConsoleOptions = {
    ...(config.consoleDecisionApiUrl === undefined ? {} : { decisionApiUrl: config.consoleDecisionApiUrl }),
    ...(config.consoleRelayUrl === undefined ? {} : { relayUrl: config.consoleRelayUrl }),
    sampleMs: config.consoleSampleMs,
    assetsDir: config.consoleDir ?? assetsDir,
  };
  return {
    controllers: [ConsoleAssetsController, OverviewController, PipelineController, PolicyPreviewController],
    providers: [
      { provide: CONSOLE_OPTIONS, useValue: options },
      {
        provide: CONSOLE_REDIS,
        useFactory: () => createRedisClient(config.redis, 'command', 'tally-console'),
      },
      ConsoleRedisShutdown,
      ConsoleSampler,
    ],
  };
}
