/**
 * overrides/: runtime overrides (a key's limits raised, lowered or blocked without a policy reload).
 * Their validation against the policy set, the stored record, the write script (`lua/override-write.lua`),
 * listing, `OverridesService` (the control API's use case) and `OverridesCache` (this process's copy,
 * polled, which the local fallback consults while Redis fails).
 *
 * Does NOT own:
 * - applying an override to a decision: decide.lua reads it in the decision's step (`lua/`);
 * - the override keys (store/keys.ts) or the override event's payload (`@tally/events`);
 * - what a failed step answers with the copy (failure/ `LocalFallback`);
 * - the HTTP routes, their DTOs and auth (apps/decision-api).
 */
export {
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  OverridesService,
  keyOnWire,
  type OverrideAddress,
  type OverrideResult,
} from './overrides.service';
export { OverridesStore, type OverrideWritten } from './overrides.store';
export { OverridesCache, type OverrideCacheOptions, type OverrideCacheStats } from './overrides.cache';
export { OverrideCopy, type HeldOverride, type SkippedOverrides } from './override-copy';
export type { Override, OverrideChange, OverrideTarget } from './override.types';
export type { OverridePage } from './override-list';
export { EMPTY_KEY, checkChange, checkTarget, parseRfc3339 } from './override-validation';
