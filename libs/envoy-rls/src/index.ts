/**
 * @tally/envoy-rls — Envoy's rate-limit service (RLS) over gRPC: descriptors → decision requests,
 * decisions → the RLS answer (decision kind → descriptor code in one table), the call gate, and
 * what an ended call lets go of (release-ended-calls.ts).
 *
 * Does NOT own: the decisions themselves (libs/engine), the rate-limit headers it relays
 * (libs/api-contract), the HTTP status of a decision (libs/http).
 */
export { loadRateLimitService, RLS_SERVICE_NAME, type RateLimitServiceProto } from './rls-proto';
export {
  toDecisionRequests,
  MAX_DESCRIPTOR_ENTRIES,
  DOMAIN_ATTRIBUTE,
  type RlsRequestLimits,
  type RlsRequestMapping,
} from './rls-request.mapper';
export { toRlsOutcome, type RlsOutcome, type RlsResponseContext } from './rls-response.mapper';
export { rateLimitUnitOf } from './rate-limit-unit';
export { overrideWindow, overrideWindowSpec, type OverrideMapping } from './rls-limit-override';
export { RlsCallGate, type AuthRefusal, type RlsCallGateOptions, type RlsRefusal } from './rls-call-gate';
export { rlsServerOptions, MAX_SEND_MESSAGE_BYTES, type RlsServerLimits } from './rls-server-options';
export { releaseClosedStreams, releaseWhenEnded } from './release-ended-calls';
export type {
  RlsCode,
  RlsDescriptor,
  RlsDescriptorEntry,
  RlsDescriptorStatus,
  RlsDuration,
  RlsHeaderValue,
  RlsRateLimit,
  RlsRequest,
  RlsResponse,
  RlsUnit,
} from './rls.types';
