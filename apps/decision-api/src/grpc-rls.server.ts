import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { loadRateLimitService, type RlsRequest, type RlsResponse } from '@tally/envoy-rls';
import { HealthRegistry } from '@tally/observability';
import { GrpcRlsService } from './grpc-rls.service';

/** In-flight calls get this long to finish at shutdown before the server cuts them. */
const DRAIN_MS = 5000;

/**
 * Envoy's rate-limit gRPC service on `TALLY_GRPC_PORT`. `main.ts` starts it once HTTP listens; it
 * stops in `onModuleDestroy`, which Nest runs for this (root) module before the engine's, so calls in
 * flight finish while Redis is still connected. Readiness gains the component `grpc` when it starts.
 */
@Injectable()
export class GrpcRlsServer implements OnModuleDestroy {
  private readonly logger = new Logger('EnvoyRls');
  private server?: Server;
  private serving = false;

  constructor(
    private readonly rls: GrpcRlsService,
    private readonly health: HealthRegistry,
  ) {}

  /** Binds `host:port` (0 = any free port) and resolves with the bound port. */
  async start(host: string, port: number): Promise<number> {
    const server = new Server();
    const implementation: UntypedServiceImplementation = {
      ShouldRateLimit: (
        call: ServerUnaryCall<RlsRequest, RlsResponse>,
        callback: sendUnaryData<RlsResponse>,
      ): void => {
        this.rls.shouldRateLimit(call.request, call.metadata.get('authorization')).then(
          (result) =>
            result.ok
              ? callback(null, result.response)
              : callback({ code: result.code, details: result.message }, null),
          () => callback({ code: status.INTERNAL, details: 'internal error' }, null),
        );
      },
    };
    server.addService(loadRateLimitService().definition, implementation);
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, ServerCredentials.createInsecure(), (error, p) =>
        error ? reject(error) : resolve(p),
      ),
    );
    this.server = server;
    this.serving = true;
    this.health.register('grpc', () =>
      this.serving ? { status: 'up', detail: `port ${bound}` } : { status: 'down', detail: 'stopped' },
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
}
