import { Inject, Injectable, Logger } from '@nestjs/common';
import { status } from '@grpc/grpc-js';
import { TALLY_CONFIG, type TallyConfig } from '@tally/config';
import { DecisionService } from '@tally/engine';
import {
  toDecisionRequests,
  toRlsOutcome,
  type RlsRequest,
  type RlsRequestLimits,
  type RlsResponse,
} from '@tally/envoy-rls';
import { PolicyStore } from '@tally/policy';
import { rateLimitHeaders } from './rate-limit-headers';

/** A `ShouldRateLimit` answer, or the gRPC status that stands for it. */
export type RlsCallResult =
  | { readonly ok: true; readonly response: RlsResponse }
  | { readonly ok: false; readonly code: status; readonly message: string };

/**
 * Envoy's `ShouldRateLimit` → one `decideBatch` (one Redis round trip for all descriptors) → the RLS
 * answer. Each descriptor is an independent decision, like an item of `POST /v1/decisions:batch`:
 * an allowed descriptor is charged even when another one is over limit (as in envoyproxy/ratelimit).
 * Put every dim in one descriptor to have all of them checked atomically.
 *
 * Authentication and the in-flight limit are not here: the server's call gate decides both from the
 * metadata, before the request is read (see `GrpcRlsServer`).
 */
@Injectable()
export class GrpcRlsService {
  private readonly logger = new Logger('EnvoyRls');
  private readonly limits: RlsRequestLimits;

  constructor(
    private readonly decisions: DecisionService,
    private readonly store: PolicyStore,
    @Inject(TALLY_CONFIG) config: TallyConfig,
  ) {
    this.limits = { maxDescriptors: config.grpcMaxDescriptors };
  }

  async shouldRateLimit(request: RlsRequest): Promise<RlsCallResult> {
    const mapped = toDecisionRequests(request, this.limits);
    if (!mapped.ok) return { ok: false, code: status.INVALID_ARGUMENT, message: mapped.message };
    let outcome;
    try {
      const decisions = await this.decisions.decideBatch(mapped.requests);
      outcome = toRlsOutcome(decisions, {
        windowOf: (policy, window) =>
          this.store.current.policies.find((p) => p.name === policy)?.windows.find((w) => w.name === window),
        headersOf: rateLimitHeaders,
      });
    } catch (error) {
      // The engine turns backend failures into decisions; anything else is a bug, and Envoy's failure
      // mode is the right answer to it.
      this.logger.error(`ShouldRateLimit failed: ${error instanceof Error ? error.stack : String(error)}`);
      return { ok: false, code: status.INTERNAL, message: 'internal error' };
    }
    switch (outcome.kind) {
      case 'answer':
        return { ok: true, response: outcome.response };
      case 'invalid':
        return { ok: false, code: status.INVALID_ARGUMENT, message: outcome.message };
      case 'unavailable':
        return { ok: false, code: status.UNAVAILABLE, message: outcome.message };
    }
  }
}
