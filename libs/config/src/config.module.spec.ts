import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { TALLY_CONFIG } from './config.constants';
import { ConfigModule } from './config.module';
import { loadConfig } from './load-config';
import { TallyConfig } from './tally.config';

@Injectable()
class NeedsConfig {
  constructor(@Inject(TALLY_CONFIG) readonly config: TallyConfig) {}
}

// A feature module that does not import ConfigModule: the global module must still reach it.
@Module({ providers: [NeedsConfig], exports: [NeedsConfig] })
class FeatureModule {}

describe(ConfigModule.name, () => {
  it('provides the config globally under TALLY_CONFIG', async () => {
    const config = loadConfig({
      TALLY_AUTH: 'none',
      TALLY_TOKEN_SECRET: 'hmac-secret-00000001',
      TALLY_SHARDS: '8',
    });

    const sut = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), FeatureModule],
    }).compile();

    expect(sut.get(NeedsConfig).config).toBe(config);
    expect(sut.get(NeedsConfig).config.shards).toBe(8);
  });
});
