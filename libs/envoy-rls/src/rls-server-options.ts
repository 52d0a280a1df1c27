import type { UnaryServerOptions } from './unary-grpc-server';

/** The transport limits of the RLS listener an operator sets (`TALLY_GRPC_*`). */
export interface RlsServerLimits {
  /** Largest request message; refused from its length prefix (RESOURCE_EXHAUSTED), never buffered. */
  readonly maxMessageBytes: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly maxConnectionIdleMs: number;
  readonly maxConnectionAgeMs: number;
}

/**
 * Largest answer. Tally builds answers itself, so this only guards against a bug: one status per
 * descriptor is under 400 bytes (1,000 descriptors < 400 KB) and the `RateLimit-Policy` header lists
 * each enforced window of the policy file once. An answer above it would fail after its decisions
 * were committed, hence a generous bound rather than the request cap.
 */
export const MAX_SEND_MESSAGE_BYTES = 1024 * 1024;

/**
 * After a connection reaches its maximum age it is sent GOAWAY; calls already on it get this long to
 * finish before it is closed. A call lasts a Redis deadline (`TALLY_BACKEND_TIMEOUT_MS`, ≤ 60 s) at
 * most once its request is in.
 */
export const CONNECTION_AGE_GRACE_MS = 60_000;

/** The transport settings of the RLS listener, from the operator's limits. */
export function rlsServerOptions(
  limits: RlsServerLimits,
): Pick<
  UnaryServerOptions,
  | 'maxMessageBytes'
  | 'maxSendMessageBytes'
  | 'keepaliveTimeMs'
  | 'keepaliveTimeoutMs'
  | 'maxConnectionIdleMs'
  | 'maxConnectionAgeMs'
  | 'connectionAgeGraceMs'
> {
  return {
    ...limits,
    maxSendMessageBytes: Math.max(MAX_SEND_MESSAGE_BYTES, limits.maxMessageBytes),
    connectionAgeGraceMs: CONNECTION_AGE_GRACE_MS,
  };
}
