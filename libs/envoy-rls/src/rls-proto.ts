import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type MethodDefinition, type Options } from '@grpc/proto-loader';
import { join } from 'node:path';
import { encodeRlsResponse } from './rls-response.encoder';
import type { RlsRequest, RlsResponse } from './rls.types';
import type { UnaryMethod } from './unary-grpc-server';

/** Fully qualified name of Envoy's rate-limit service. */
export const RLS_SERVICE_NAME = 'envoy.service.ratelimit.v3.RateLimitService';

/**
 * How messages cross into TypeScript (see `rls.types.ts`). `defaults: false` keeps "unset" visible,
 * which the descriptor's `hits_addend` wrapper needs; `longs: Number` is exact up to 2^53, and a
 * larger cost is refused as too large anyway.
 */
const LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  oneofs: true,
};

export interface RateLimitServiceProto {
  /** The method as Tally's server answers it: its path and protobufjs codec. */
  readonly shouldRateLimit: UnaryMethod<RlsRequest, RlsResponse>;
  /** The service as grpc-js sees it (`Server.addService`; its codecs are `shouldRateLimit`'s). */
  readonly definition: ServiceDefinition;
  /** A `@grpc/grpc-js` client class of the same service (tests, tools). */
  readonly Client: ServiceClientConstructor;
}

let loaded: RateLimitServiceProto | undefined;

/**
 * Loads the proto declarations once. They sit beside the compiled code (the build copies `*.proto`), so
 * the path is relative to this file in the source tree and in `dist/` alike.
 */
export function loadRateLimitService(): RateLimitServiceProto {
  if (loaded) return loaded;
  const definition = loadSync('envoy/service/ratelimit/v3/rls.proto', {
    ...LOADER_OPTIONS,
    includeDirs: [join(__dirname, 'proto')],
  });
  let node: unknown = loadPackageDefinition(definition);
  for (const part of RLS_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
  const Client = node as ServiceClientConstructor;
  const method = (definition[RLS_SERVICE_NAME] as Record<string, MethodDefinition<RlsRequest, RlsResponse>>)
    .ShouldRateLimit;
  const shouldRateLimit = {
    path: method.path,
    decode: (bytes: Buffer) => method.requestDeserialize(bytes),
    // Every answer through Tally's own writer; protobufjs for what it leaves to it (non-ASCII text).
    encode: (response: RlsResponse) => encodeRlsResponse(response) ?? method.responseSerialize(response),
  };
  loaded = { shouldRateLimit, definition: Client.service, Client };
  return loaded;
}
