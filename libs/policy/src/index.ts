/**
 * @tally/policy: the policy file and what it selects. Its schema and rules (class-validator, every
 * error listed), the compiler into a `PolicySet` with its version hash, `PolicyStore` (the file as a
 * `ReloadableFile`, hot reload), selector normalization and the token HMAC, and matching
 * (`selectPolicies`, `keyOf`).
 *
 * Does NOT own:
 * - reading, watching and reloading a file (`@tally/config`'s `ReloadableFile`, `parseYamlFile`);
 * - what a window does with a cost, keys, state and overrides (`@tally/engine`);
 * - the reload endpoint and its auth (apps/decision-api), `tally policy check` (`@tally/ops`);
 * - importing envoyproxy/ratelimit configs (`@tally/ops`).
 */
export {
  ALGORITHMS,
  FAIL_MODES,
  OVERFLOW_MODES,
  POLICY_MODES,
  SELECTOR_DIMS,
  WINDOW_ROLES,
  type Algorithm,
  type FailMode,
  type OverflowMode,
  type MatchSpec,
  type Policy,
  type PolicyError,
  type PolicyMode,
  type PolicySet,
  type SelectorDim,
  type WindowRole,
  type WindowSpec,
} from './policy.types';
export { POLICY_FILE_FIELDS, WINDOW_FILE_FIELDS } from './policy.fields';
export { compilePolicyFile, type CompileResult } from './policy.compiler';
export { ALGORITHM_RULES, capacityOf, scaleBound, type AlgorithmRules } from './algorithm-rules';
export {
  ATTRIBUTE_NAME,
  MAX_ATTRIBUTES,
  normalizeAttributes,
  normalizeSelectors,
  type NormalizedAttributes,
  type NormalizedSelectors,
  type SelectorFailure,
  valueProblem,
} from './selectors';
export { keyOf, selectPolicies } from './matcher';
export { formatDuration, parseDuration } from './duration';
export { PolicyModule } from './policy.module';
export {
  PolicyLoadError,
  PolicyStore,
  type ReloadListener,
  type ReloadResult,
  type ReloadTrigger,
} from './policy.store';
export { POLICY_MODULE_OPTIONS } from './policy.constants';
export type { PolicyModuleOptions } from './policy.options';
