/**
 * The messages of `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` as
 * `@grpc/proto-loader` hands them over with the options of `rls-proto.ts` (field names as in the
 * .proto, enums as their names, 64-bit integers as numbers, unset fields absent).
 */

/** `RateLimitResponse.Code`. */
export type RlsCode = 'UNKNOWN' | 'OK' | 'OVER_LIMIT';

/** `RateLimitResponse.RateLimit.Unit`; Tally never answers `UNKNOWN` or `YEAR` (periods stop at 31d). */
export type RlsUnit = 'UNKNOWN' | 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'MONTH' | 'YEAR';

/** `common.ratelimit.v3.RateLimitDescriptor.Entry`: one hierarchical key/value pair. */
export interface RlsDescriptorEntry {
  readonly key?: string;
  readonly value?: string;
}

/** `common.ratelimit.v3.RateLimitDescriptor`. */
export interface RlsDescriptor {
  readonly entries?: readonly RlsDescriptorEntry[];
  /** A limit override from Envoy's route config: replaces the matching policies' windows (`overrideWindow`). */
  readonly limit?: { readonly requests_per_unit?: number; readonly unit?: string | number } | null;
  /** `google.protobuf.UInt64Value`: when present it wins over the request's `hits_addend`, 0 included. */
  readonly hits_addend?: { readonly value?: number } | null;
}

/** `service.ratelimit.v3.RateLimitRequest`. */
export interface RlsRequest {
  /** Envoy's `domain` of the filter; becomes the attribute `domain` of every decision. */
  readonly domain?: string;
  readonly descriptors?: readonly RlsDescriptor[];
  /** Units each descriptor spends; 0 (unset on the wire) means 1. */
  readonly hits_addend?: number;
}

/** `google.protobuf.Duration`. */
export interface RlsDuration {
  readonly seconds: number;
  readonly nanos: number;
}

/** `RateLimitResponse.RateLimit`: the limit that binds a descriptor. */
export interface RlsRateLimit {
  /** `<policy>.<window>` of the binding window. */
  readonly name: string;
  readonly requests_per_unit: number;
  readonly unit: RlsUnit;
}

/** `RateLimitResponse.DescriptorStatus`, one per request descriptor, in request order. */
export interface RlsDescriptorStatus {
  readonly code: RlsCode;
  /** Absent when no enforced window binds, or when its period is not exactly one Envoy unit. */
  readonly current_limit?: RlsRateLimit;
  /** Units left in the binding window (0 when nothing binds). */
  readonly limit_remaining: number;
  /** Until the binding window is back to its full limit; absent when nothing binds. */
  readonly duration_until_reset?: RlsDuration;
}

/** `config.core.v3.HeaderValue`. */
export interface RlsHeaderValue {
  readonly key: string;
  readonly value: string;
}

/** `service.ratelimit.v3.RateLimitResponse` (the fields Tally sets). */
export interface RlsResponse {
  readonly overall_code: RlsCode;
  readonly statuses: readonly RlsDescriptorStatus[];
  readonly response_headers_to_add: readonly RlsHeaderValue[];
}
