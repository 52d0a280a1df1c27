/**
 * @tally/api-contract — the decision API's wire contract, and the projector's query API
 * (projector.schema.ts) and the operator console's calls (console.schema.ts), defined once: every request, response and error body as a TypeBox schema (JSON Schema at run time, the TypeScript type at compile time), the
 * decision kinds, and the rate-limit headers. The server validates with these schemas, the SDK takes
 * its types from them, and the OpenAPI document is built from them. Depends on nothing but TypeBox,
 * so the SDK can import its types without loading the server.
 *
 * Does NOT own:
 * - the error codes and their statuses (libs/errors error-codes.ts), nor kind → HTTP status (libs/http);
 * - validation itself (libs/http schema-validator.ts compiles these schemas), nor the OpenAPI builder;
 * - what a decision means (libs/engine), nor kind → gRPC code (libs/envoy-rls);
 * - the event payloads on Kafka (libs/events).
 */
export {
  DecisionRequestSchema,
  BatchRequestSchema,
  BatchEnvelopeSchema,
  MAX_BATCH,
  type DecisionRequestBody,
  type BatchRequestBody,
  type BatchEnvelope,
} from './decision-request.schema';
export {
  DecisionBodySchema,
  LeaseSchema,
  DecisionPolicySchema,
  DecisionWindowSchema,
  DecisionCodeSchema,
  DenyReasonSchema,
  DENY_REASONS,
  DECISION_CODES,
  type DecisionBody,
  type Lease,
  type DecisionPolicy,
  type DecisionWindow,
  type DecisionCode,
  type DenyReason,
  type BackendFailure,
} from './decision-response.schema';
export {
  BatchResponseSchema,
  BatchDecisionItemSchema,
  BatchRefusedItemSchema,
  type BatchResponseBody,
  type BatchRefusedItem,
} from './batch-response.schema';
export {
  LeaseReleaseSchema,
  LeaseExtendRequestSchema,
  LeaseExtendSchema,
  MAX_LEASE_TTL_MS,
  type LeaseReleaseBody,
  type LeaseExtendRequest,
  type LeaseExtendBody,
} from './lease.schema';
export { ErrorBodySchema, FieldErrorSchema, type ErrorBody, type FieldError } from './error-body.schema';
export {
  PolicyListSchema,
  PolicyStateSchema,
  PolicyReloadSchema,
  TokensReloadSchema,
  type PolicyList,
  type PolicyState,
  type PolicyReload,
  type TokensReload,
} from './control.schema';
export {
  OverridePutSchema,
  OverrideItemSchema,
  OverrideListSchema,
  OverrideListQuerySchema,
  OverrideTargetQuerySchema,
  type OverridePut,
  type OverrideItem,
  type OverrideList,
  type OverrideListQuery,
  type OverrideTargetQuery,
} from './override.schema';
export { LivenessSchema, ReadinessSchema, type Liveness, type Readiness } from './health.schema';
export {
  UsageQuerySchema,
  TopKeysQuerySchema,
  AuditQuerySchema,
  ProjectorTotalsSchema,
  UsageResponseSchema,
  TopKeysResponseSchema,
  AuditResponseSchema,
  type UsageQuery,
  type TopKeysQueryParams,
  type AuditQuery,
  type UsageResponse,
  type TopKeysResponse,
  type AuditResponse,
} from './projector.schema';
export {
  SessionSchema,
  PolicyReloadsSchema,
  SimulateRequestSchema,
  SimulationSchema,
  NamespacesSchema,
  NamespaceSwitchSchema,
  NamespaceSwitchedSchema,
  PipelineSchema,
  OverviewSchema,
  type Session,
  type PolicyReloads,
  type SimulateRequest,
  type NamespaceSwitch,
} from './console.schema';
export { DECISION_KINDS, type DecisionKind, type OutcomeKind } from './decision-kind';
export {
  rateLimitHeaders,
  RATE_LIMIT_HEADERS,
  type RateLimitBinding,
  type RateLimitHeaderName,
  type RateLimitSource,
} from './rate-limit-headers';
export type { Wire } from './wire';
