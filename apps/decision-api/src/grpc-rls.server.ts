import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { status } from '@grpc/grpc-js';
import { loadTlsFiles, TALLY_CONFIG, type TallyConfig } from '@tally/config';
import {
  loadRateLimitService,
  releaseClosedStreams,
  rlsServerOptions,
  UnaryGrpcServer,
  type RlsRequest,
  type RlsResponse,
  type UnaryAnswer,
  type UnaryCall,
  type UnaryMethod,
} from '@tally/envoy-rls';
import { BearerTokens } from '@tally/auth';
import { HealthRegistry, REQUEST_ID_HEADER } from '@tally/observability';
import { GrpcCallerAuth } from './grpc-auth';
import { GrpcMetrics } from './grpc-metrics';
import { callInfo } from './grpc-call-info';
import { GrpcRlsService } from './grpc-rls.service';

/** In-flight calls get this long to finish at shutdown before the server cuts them. */
const DRAIN_MS = 5000;

/**
 * Envoy's rate-limit gRPC service on `TALLY_GRPC_PORT`, on Tally's own unary gRPC server (libs/envoy-rls
 * `UnaryGrpcServer`, on Node's HTTP/2). `main.ts` starts it once HTTP listens; it stops in
 * `onModuleDestroy`, which Nest runs for this (root) module before the engine's, so calls in flight
 * finish while Redis is still connected. Readiness gains the component `grpc` when it starts.
 *
 * Limits (docs/envoy.md, "Limits"): every call is checked for its token and the in-flight limit
 * before its request is read; a request above `TALLY_GRPC_MAX_MESSAGE_BYTES` is refused from its
 * length prefix; an admitted call has `TALLY_GRPC_READ_TIMEOUT` to deliver its request; idle and old
 * connections are closed (`TALLY_GRPC_MAX_CONNECTION_*`). With `TALLY_TLS_CERT`/`TALLY_TLS_KEY` it
 * serves TLS only.
 */
@Injectable()
export class GrpcRlsServer implements OnModuleDestroy {
  private readonly logger = new Logger('EnvoyRls');
  private server?: UnaryGrpcServer<RlsRequest, RlsResponse>;
  private serving = false;

  constructor(
    private readonly rls: GrpcRlsService,
    private readonly health: HealthRegistry,
    private readonly metrics: GrpcMetrics,
    @Inject(TALLY_CONFIG) private readonly config: TallyConfig,
    private readonly tokens: BearerTokens,
  ) {}

  /** Binds `host:port` (0 = any free port) and resolves with the bound port. */
  async start(host: string, port: number): Promise<number> {
    const config = this.config;
    const auth = new GrpcCallerAuth(this.tokens);
    // An ended call's stream lets go of its listeners (release-ended-calls.ts): the call is then free
    // at the next scavenge.
    releaseClosedStreams();
    const tls = loadTlsFiles(config);
    const server = new UnaryGrpcServer(
      this.countingDecodes(loadRateLimitService().shouldRateLimit),
      this.handle,
      {
        ...rlsServerOptions({
          maxMessageBytes: config.grpcMaxMessageBytes,
          keepaliveTimeMs: config.grpcKeepaliveTimeMs,
          keepaliveTimeoutMs: config.grpcKeepaliveTimeoutMs,
          maxConnectionIdleMs: config.grpcMaxConnectionIdleMs,
          maxConnectionAgeMs: config.grpcMaxConnectionAgeMs,
        }),
        tls,
        readTimeoutMs: config.grpcReadTimeoutMs,
        maxInflight: config.maxInflight,
        authorize: (headers, peer) => auth.headerRefusal(headers.authorization, peer),
        onRefused: (reason) => this.metrics.refused(reason),
      },
    );
    this.metrics.watchInflight(() => server.inFlight);
    const bound = await server.listen(host, port);
    this.server = server;
    this.serving = true;
    const scheme = tls === undefined ? 'plaintext' : 'TLS';
    this.health.register('grpc', () =>
      this.serving
        ? { status: 'up', detail: `port ${bound}, ${scheme}` }
        : { status: 'down', detail: 'stopped' },
    );
    return bound;
  }

  async onModuleDestroy(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.serving = false;
    this.server = undefined;
    const cut = await server.close(DRAIN_MS);
    if (cut > 0) this.logger.warn(`gRPC calls still running after ${DRAIN_MS} ms, cut ${cut} connection(s)`);
  }

  /** One `ShouldRateLimit` call; its request id goes back in the answer's headers, errors included. */
  private readonly handle = async (
    request: RlsRequest,
    call: UnaryCall,
  ): Promise<UnaryAnswer<RlsResponse>> => {
    const info = callInfo(call.headers);
    const headers = { [REQUEST_ID_HEADER]: info.requestId };
    try {
      const result = await this.rls.shouldRateLimit(request, call.headers.authorization, call.peer, info);
      return result.ok
        ? { ok: true, response: result.response, headers }
        : { ok: false, code: result.code, message: result.message, headers };
    } catch {
      return { ok: false, code: status.INTERNAL, message: 'internal error', headers };
    }
  };

  /** The method with its request decoder counted: what the server refuses never shows up here. */
  private countingDecodes(
    method: UnaryMethod<RlsRequest, RlsResponse>,
  ): UnaryMethod<RlsRequest, RlsResponse> {
    return {
      ...method,
      decode: (bytes) => {
        this.metrics.decoded();
        return method.decode(bytes);
      },
    };
  }
}
