import { inject } from 'vitest';

/** Where the real services of this test run are (chosen by test/global-setup.ts). */
export function testEnv(): { redisUrl: string; kafkaBrokers: string[] } {
  return {
    redisUrl: inject('redisUrl'),
    kafkaBrokers: inject('kafkaBrokers')
      .split(',')
      .map((b) => b.trim()),
  };
}

/** A name no other test (or earlier run) uses: for topics, groups, tenants, policies. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
