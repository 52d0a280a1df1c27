import { type Provider, type Type } from '@nestjs/common';
import { type TallyConfig } from '@tally/config';
import { ConsoleAssetsController } from './console-assets.controller';
import { ConsoleRedis } from './console-redis';
import { ConsoleSampler } from './console-sampler';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';
import { OverridesForwardController } from './overrides-forward.controller';
import { OverviewController } from './overview.controller';
import { PipelineController } from './pipeline.controller';
import { PolicyPreviewController } from './policy-preview.controller';

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
    redis: config.redis,
  };
  return {
    controllers: [
      ConsoleAssetsController,
      OverviewController,
      PipelineController,
      PolicyPreviewController,
      OverridesForwardController,
    ],
    providers: [{ provide: CONSOLE_OPTIONS, useValue: options }, ConsoleRedis, ConsoleSampler],
  };
}
