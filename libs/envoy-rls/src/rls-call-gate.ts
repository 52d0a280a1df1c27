import {
  ServerInterceptingCall,
  status,
  type Metadata,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';

/** Why the gate ended a call before the handler saw it. */
export type RlsRefusal = 'unauthenticated' | 'forbidden' | 'overloaded' | 'read_timeout';

/** The header-stage answer to a call's token: a stranger (UNAUTHENTICATED) or a token without the role. */
export interface AuthRefusal {
  readonly code: status.UNAUTHENTICATED | status.PERMISSION_DENIED;
  readonly details: string;
}

export interface RlsCallGateOptions {
  /**
   * The refusal of the call's token, or undefined when it is accepted for this service. `peer`: the
   * call's connection as grpc-js names it (`address:port`).
   */
  readonly authorize: (metadata: Metadata, peer: string) => AuthRefusal | undefined;
  /** Admitted calls in flight above which new ones are shed (`TALLY_MAX_INFLIGHT`). */
  readonly maxInflight: number;
  /** How long an admitted call may take to deliver its whole request (`TALLY_GRPC_READ_TIMEOUT`). */
  readonly readTimeoutMs: number;
  /** Sees every refusal (metrics). */
  readonly onRefused?: (reason: RlsRefusal) => void;
}

export const UNAUTHENTICATED_DETAILS =
  'an authorization: Bearer <token> metadata entry with an accepted token is required';
export const OVERLOADED_DETAILS = 'server.overloaded: too many calls in flight; retry shortly';

/**
 * Every `ShouldRateLimit` call passes this server interceptor before its message is read. grpc-js
 * hands an interceptor the call's metadata first and reads the request off the HTTP/2 stream only
 * once the handler asks for it, so a call refused here never has its message read, decoded or
 * mapped: an unauthenticated caller costs one header check, whatever it sends after its headers.
 *
 * In order:
 * 1. authentication from the metadata (UNAUTHENTICATED; PERMISSION_DENIED for a token without the
 *    role), so a stranger never takes a slot;
 * 2. the in-flight limit, like the HTTP API's: above it the call is shed at once with UNAVAILABLE
 *    (`server.overloaded`), the code gRPC clients and Envoy's retry policies treat as "nothing was
 *    done, retry with backoff", which holds: a shed call consumes nothing;
 * 3. a read deadline: an admitted caller that stalls mid-message would otherwise hold its slot for as
 *    long as it likes (DEADLINE_EXCEEDED).
 * A slot is given back when the call ends, however it ends (answered, refused later, cancelled by
 * the client, cut by the transport): grpc-js ends every call with the listener's `onCancel`.
 */
export class RlsCallGate {
  private inflight = 0;

  constructor(private readonly options: RlsCallGateOptions) {}

  /** Calls admitted and not yet ended. */
  get inFlight(): number {
    return this.inflight;
  }

  /** For `new Server({ interceptors: [gate.interceptor] })`. */
  readonly interceptor: ServerInterceptor = (_method, call) => this.intercept(call);

  private intercept(call: ServerInterceptingCallInterface): ServerInterceptingCall {
    let admitted = false;
    let readTimer: NodeJS.Timeout | undefined;
    const refuse = (reason: RlsRefusal, code: status, details: string): void => {
      this.options.onRefused?.(reason);
      call.sendStatus({ code, details, metadata: null });
    };
    const release = (): void => {
      clearTimeout(readTimer);
      if (!admitted) return;
      admitted = false;
      this.inflight -= 1;
    };
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, proceed) => {
            const denied = this.options.authorize(metadata, call.getPeer());
            if (denied) {
              const reason = denied.code === status.UNAUTHENTICATED ? 'unauthenticated' : 'forbidden';
              refuse(reason, denied.code, denied.details);
              return;
            }
            if (this.inflight >= this.options.maxInflight) {
              refuse('overloaded', status.UNAVAILABLE, OVERLOADED_DETAILS);
              return;
            }
            this.inflight += 1;
            admitted = true;
            readTimer = setTimeout(
              () =>
                refuse(
                  'read_timeout',
                  status.DEADLINE_EXCEEDED,
                  `the request was not received within ${this.options.readTimeoutMs} ms`,
                ),
              this.options.readTimeoutMs,
            );
            proceed(metadata);
          },
          // A unary request is complete at the half-close: the handler starts then.
          onReceiveHalfClose: (proceed) => {
            clearTimeout(readTimer);
            proceed();
          },
          onCancel: release,
        }),
    });
  }
}
