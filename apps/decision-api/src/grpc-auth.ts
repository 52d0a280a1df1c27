import { timingSafeEqual } from 'node:crypto';
import { type HttpOptions } from '@tally/http';

/**
 * The caller check of the gRPC API, the same rule as the HTTP guard: `authorization: Bearer <token>`
 * metadata holding a caller token (or the admin token), compared in constant time; `TALLY_AUTH=none`
 * lets everything through. Envoy sends the token via `grpc_service.initial_metadata`.
 */
export class GrpcCallerAuth {
  private readonly accepted: readonly Buffer[];

  constructor(private readonly options: Pick<HttpOptions, 'auth' | 'callerTokens' | 'adminToken'>) {
    const tokens = [...options.callerTokens, ...(options.adminToken ? [options.adminToken] : [])];
    this.accepted = tokens.map((t) => Buffer.from(t));
  }

  /** `values`: what the `authorization` metadata key holds (gRPC allows it to repeat; the first counts). */
  allows(values: readonly (string | Buffer)[]): boolean {
    if (this.options.auth === 'none') return true;
    const first = values[0];
    const match = /^Bearer\s+(\S+)\s*$/i.exec(typeof first === 'string' ? first : '');
    if (!match) return false;
    const presented = Buffer.from(match[1]);
    // Every token is compared, so timing does not say which one (or whether an early one) nearly matched.
    let ok = false;
    for (const t of this.accepted)
      ok = (t.length === presented.length && timingSafeEqual(t, presented)) || ok;
    return ok;
  }
}
