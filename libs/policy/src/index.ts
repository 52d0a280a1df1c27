export {
  ALGORITHMS,
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
