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
