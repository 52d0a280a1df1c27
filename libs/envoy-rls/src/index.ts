export { loadRateLimitService, RLS_SERVICE_NAME, type RateLimitServiceProto } from './rls-proto';
export {
  toDecisionRequests,
  MAX_DESCRIPTORS,
  DOMAIN_ATTRIBUTE,
  type RlsRequestMapping,
} from './rls-request.mapper';
export { toRlsOutcome, type RlsOutcome, type RlsResponseContext } from './rls-response.mapper';
export { rateLimitUnitOf } from './rate-limit-unit';
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
