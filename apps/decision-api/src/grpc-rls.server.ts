import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { loadTlsFiles, TALLY_CONFIG, type TallyConfig } from '@tally/config';
import {
  loadRateLimitService,
  releaseClosedStreams,
  releaseWhenEnded,
  RlsCallGate,
  rlsServerOptions,
  type RlsRequest,
  type RlsResponse,
} from '@tally/envoy-rls';
import { BearerTokens } from '@tally/auth';
import { HealthRegistry } from '@tally/observability';
import { GrpcCallerAuth } from './grpc-auth';
import { GrpcMetrics } from './grpc-metrics';
import { callInfo, echoRequestId } from './grpc-call-info';
import { GrpcRlsService } from './grpc-rls.service';

/** In-flight calls get this long to finish at shutdown before the server cuts them. */
const DRAIN_MS = 5000;

/**
 * Envoy's rate-limit gRPC service on `TALLY_GRPC_PORT`. `main.ts` starts it once HTTP listens; it
 * stops in `onModuleDestroy`, which Nest runs for this (root) module before the engine's, so calls in
 * flight finish while Redis is still connected. Readiness gains the component `grpc` when it starts.
 *
 * Limits (docs/envoy.md, "Limits"): every call passes the `RlsCallGate` (token, in-flight limit,
 * read deadline) before its request is read; grpc-js refuses a request above
 * `TALLY_GRPC_MAX_MESSAGE_BYTES` before decoding it; idle and old connections are closed
 * (`TALLY_GRPC_MAX_CONNECTION_*`). With `TALLY_TLS_CERT`/`TALLY_TLS_KEY` it serves TLS only.
 */
@Injectable()
export class GrpcRlsServer implements OnModuleDestroy {
  private readonly logger = new Logger('EnvoyRls');
  private server?: Server;
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
    const auth = new GrpcCallerAuth(this.tokens);
    const gate = new RlsCallGate({
      authorize: (metadata, peer) => auth.headerRefusal(metadata.get('authorization'), peer),
      maxInflight: this.config.maxInflight,
      readTimeoutMs: this.config.grpcReadTimeoutMs,
      onRefused: (reason) => this.metrics.refused(reason),
    });
    this.metrics.watchInflight(() => gate.inFlight);
    // An ended call's streams let go of it (release-ended-calls.ts): it is then free at the next scavenge.
    releaseClosedStreams();
    const server = new Server({
      ...rlsServerOptions({
        maxMessageBytes: this.config.grpcMaxMessageBytes,
        keepaliveTimeMs: this.config.grpcKeepaliveTimeMs,
        keepaliveTimeoutMs: this.config.grpcKeepaliveTimeoutMs,
        maxConnectionIdleMs: this.config.grpcMaxConnectionIdleMs,
        maxConnectionAgeMs: this.config.grpcMaxConnectionAgeMs,
      }),
      interceptors: [gate.interceptor],
    });
    const implementation: UntypedServiceImplementation = {
      ShouldRateLimit: (
        call: ServerUnaryCall<RlsRequest, RlsResponse>,
        callback: sendUnaryData<RlsResponse>,
      ): void => {
        releaseWhenEnded(call);
        const info = callInfo(call);
        this.rls.shouldRateLimit(call.request, call.metadata.get('authorization'), call.getPeer(), info).then(
          (result) => {
            echoRequestId(call, info);
            if (result.ok) callback(null, result.response);
            else callback({ code: result.code, details: result.message }, null);
          },
          () => {
            echoRequestId(call, info);
            callback({ code: status.INTERNAL, details: 'internal error' }, null);
          },
        );
      },
    };
    server.addService(this.countingDecodes(loadRateLimitService().definition), implementation);
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, this.credentials(), (error, p) => (error ? reject(error) : resolve(p))),
    );
    this.server = server;
    this.serving = true;
    const scheme = this.config.tlsCertPath === undefined ? 'plaintext' : 'TLS';
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
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn(`gRPC calls still running after ${DRAIN_MS} ms, cutting them`);
        server.forceShutdown();
        resolve();
      }, DRAIN_MS);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** The files were checked at boot (loadConfig); they are read once, here. */
  private credentials(): ServerCredentials {
    const tls = loadTlsFiles(this.config);
    if (tls === undefined) return ServerCredentials.createInsecure();
    return ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false);
  }

  /** The service with its request decoder counted: what the gate refuses never shows up here. */
  private countingDecodes(definition: ServiceDefinition): ServiceDefinition {
    const method = definition.ShouldRateLimit;
    return {
      ...definition,
      ShouldRateLimit: {
        ...method,
        requestDeserialize: (bytes: Buffer): unknown => {
          this.metrics.decoded();
          return method.requestDeserialize(bytes);
        },
      },
    };
  }
}
