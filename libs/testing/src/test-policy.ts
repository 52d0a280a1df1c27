import type { Policy } from '@tally/policy';

/**
 * A compiled policy for tests: one sustained fixed window of 100 per minute keyed by principal,
 * max cost 10, fail open, enforced. A test names only what it is about.
 */
export function testPolicy(name: string, over: Partial<Policy> = {}): Policy {
  return {
    name,
    match: {},
    unless: {},
    key: ['principal'],
    windows: [{ name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 60_000 }],
    maxCost: 10,
    onBackendFailure: 'fail_open',
    mode: 'enforce',
    enabled: true,
    ...over,
  };
}
