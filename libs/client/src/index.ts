// The SDK core (`TallyClient`, its types, `TallyRequestError`) imports nothing from Nest or the
// server's libs; the Nest integration (`TallyModule`, `TallyGuard`, `@Quota`) is a thin layer on it.
export { TallyClient } from './tally.client';
export { TallyRequestError } from './tally-request.error';
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
  TallyFailMode,
  TallyFieldError,
  TallyPolicy,
  TallyQuota,
  TallyRateLimit,
  TallyRateLimitBinding,
  TallyWindow,
} from './client.types';
export { TallyModule, type TallyModuleOptions, type TallyModuleAsyncOptions } from './tally.module';
export { TallyGuard } from './tally.guard';
export { Quota, type QuotaOptions } from './quota.decorator';
