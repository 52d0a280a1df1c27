import { BearerTokens, type HttpOptions } from '@tally/http';

/**
 * The caller check of the gRPC API: exactly the HTTP rule (`BearerTokens`, caller or admin token in
 * constant time; `TALLY_AUTH=none` lets everything through), read from the `authorization` metadata.
 * Envoy sends the token via `grpc_service.initial_metadata`.
 */
export class GrpcCallerAuth {
  private readonly tokens: BearerTokens;

  constructor(options: Pick<HttpOptions, 'auth' | 'callerTokens' | 'adminToken'>) {
    this.tokens = new BearerTokens(options);
  }

  /** `values`: what the `authorization` metadata key holds (gRPC allows it to repeat; the first counts). */
  allows(values: readonly (string | Buffer)[]): boolean {
    const first = values[0];
    // Binary metadata is never a bearer header; treated as absent.
    return this.tokens.refusal(typeof first === 'string' ? first : undefined, 'caller') === undefined;
  }
}
