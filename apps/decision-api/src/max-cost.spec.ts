import { loadConfig } from '@tally/config';
import { DEFAULT_MAX_COST } from '@tally/engine';
import { describe, expect, it } from 'vitest';

describe('TALLY_MAX_COST', () => {
  it('defaults to the ceiling an engine built without it applies (tests and tools decide like the API)', () => {
    const config = loadConfig({
      TALLY_API_TOKENS: 'caller-token-0000001',
      TALLY_ADMIN_TOKEN: 'admin-token-00000001',
      TALLY_TOKEN_SECRET: 'hmac-secret-00000001',
    });
    expect(config.maxCost).toBe(DEFAULT_MAX_COST);
  });
});
