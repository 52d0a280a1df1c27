import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { join } from 'node:path';

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
  /** For `Server.addService`. */
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
  loaded = { definition: Client.service, Client };
  return loaded;
}
