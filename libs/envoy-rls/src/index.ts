/**
 * @tally/envoy-rls — Envoy's rate-limit service (RLS) over gRPC: descriptors → decision requests,
 * decisions → the RLS answer (decision kind → descriptor code in one table), and the gRPC server
 * that answers it on Node's HTTP/2 (unary-grpc-server.ts: framing, limits, the caller check before
 * the request is read, connections).
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
export {
  UnaryGrpcServer,
  OVERLOADED_DETAILS,
  type AuthRefusal,
  type RlsRefusal,
  type UnaryAnswer,
  type UnaryCall,
  type UnaryHandler,
  type UnaryMethod,
  type UnaryServerOptions,
} from './unary-grpc-server';
export { firstValue } from './grpc-wire';
export {
  rlsServerOptions,
  MAX_SEND_MESSAGE_BYTES,
  CONNECTION_AGE_GRACE_MS,
  type RlsServerLimits,
} from './rls-server-options';
export { releaseClosedStreams } from './release-ended-calls';
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
