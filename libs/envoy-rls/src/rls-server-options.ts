import { type ServerOptions } from '@grpc/grpc-js';

/** The transport limits of the RLS listener an operator sets (`TALLY_GRPC_*`). */
export interface RlsServerLimits {
  /** Largest request message; grpc-js answers RESOURCE_EXHAUSTED before decoding a larger one. */
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

/**
 * grpc-js server options of the RLS listener. `grpc.http2.min_ping_interval_without_data_ms` and
 * `grpc.http2.max_ping_strikes` are not set: grpc-js leaves incoming pings to Node's HTTP/2 stack and
 * implements neither (grpc/grpc-node#1699). Channelz is off: nothing serves or reads it here, and with
 * it on grpc-js keeps per-call statistics (a tracker object of four closures and a timestamp per
 * call, per message and per stream) on the hot path.
 */
export function rlsServerOptions(limits: RlsServerLimits): ServerOptions {
  return {
    'grpc.max_receive_message_length': limits.maxMessageBytes,
    'grpc.max_send_message_length': Math.max(MAX_SEND_MESSAGE_BYTES, limits.maxMessageBytes),
    'grpc.keepalive_time_ms': limits.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': limits.keepaliveTimeoutMs,
    'grpc.max_connection_idle_ms': limits.maxConnectionIdleMs,
    'grpc.max_connection_age_ms': limits.maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': CONNECTION_AGE_GRACE_MS,
    'grpc.enable_channelz': 0,
  };
}
