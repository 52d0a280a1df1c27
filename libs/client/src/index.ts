// `@tally/client`, the SDK core: `TallyClient`, its types and `TallyRequestError`, on `node:http` only.
// Does NOT own: the Nest layer (`TallyModule`, `TallyGuard`, `@Quota`: `@tally/client/nest`, so that
// importing the SDK never loads Nest); the wire contract itself (the decision API defines it).
export { TallyClient } from './tally.client';
export { TallyRequestError } from './tally-request.error';
export {
  TallyOverrides,
  type TallyOverride,
  type TallyOverrideChange,
  type TallyOverridePage,
  type TallyOverrideScope,
} from './tally-overrides';
export type {
  TallyBackendFailure,
  TallyBatchItem,
  TallyCallOptions,
  TallyClientFailure,
  TallyClientOptions,
  TallyDecision,
  TallyDecisionCode,
  TallyDecisionRequest,
  TallyDenyReason,
  TallyExtendOptions,
  TallyExtension,
  TallyFailMode,
  TallyFieldError,
  TallyLease,
  TallyLeaseOptions,
  TallyLeaseRun,
  TallyLocalFallbackOptions,
  TallyLocalWindow,
  TallyPolicy,
  TallyQuota,
  TallyRateLimit,
  TallyRateLimitBinding,
  TallyRelease,
  TallyWindow,
} from './client.types';
