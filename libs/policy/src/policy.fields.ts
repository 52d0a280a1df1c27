import type { Policy, WindowSpec } from './policy.types';

/**
 * The one list of a policy's fields: each compiled field (`Policy`, camelCase) with the name it has
 * in the policy file and in the control API (snake_case, as operators write it). A mapped type over
 * `Policy`, so a field added to the type without its entry here does not compile; policy-shape.spec.ts
 * (decision-api, where the control view is mapped) holds the file DTO's properties and the control
 * schema's to this list, field by field.
 */
export const POLICY_FILE_FIELDS: { readonly [K in keyof Required<Policy>]: string } = {
  name: 'name',
  match: 'match',
  unless: 'unless',
  matchPrefix: 'match_prefix',
  unlessPrefix: 'unless_prefix',
  key: 'key',
  windows: 'windows',
  maxCost: 'max_cost',
  onBackendFailure: 'on_backend_failure',
  localFallbackOverflow: 'local_fallback_overflow',
  mode: 'mode',
  enabled: 'enabled',
  group: 'group',
};

/**
 * The same for a window. `periodMs` is written as `period`, or as `lease_ttl` on a `concurrency`
 * window (the lease TTL is kept where the period would be); the control API shows it as `period`.
 */
export const WINDOW_FILE_FIELDS: { readonly [K in keyof Required<WindowSpec>]: readonly string[] } = {
  name: ['name'],
  role: ['role'],
  algorithm: ['algorithm'],
  limit: ['limit'],
  periodMs: ['period', 'lease_ttl'],
  burst: ['burst'],
};
