import type { Policy } from '@tally/policy';

/**
 * The policy of the backend-failure suites (engine-failure, engine-degraded): matched by a route of
 * its own name, one window far from its limit, so only the backend decides what happens.
 */
export function backendFailurePolicy(name: string, onBackendFailure: Policy['onBackendFailure']): Policy {
  return {
    name,
    match: { route: [name] },
    unless: {},
    key: ['principal'],
    windows: [{ name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 1_000, periodMs: 3_600_000 }],
    maxCost: 10,
    onBackendFailure,
    mode: 'enforce',
    enabled: true,
  };
}
