import { Inject, Injectable, Logger } from '@nestjs/common';
import { status } from '@grpc/grpc-js';
import { TALLY_CONFIG, type TallyConfig } from '@tally/config';
import { DecisionService, type Decision, type DecisionRequest } from '@tally/engine';
import {
  overrideWindowSpec,
  toDecisionRequests,
  toRlsOutcome,
  type RlsRequest,
  type RlsRequestLimits,
  type RlsResponse,
} from '@tally/envoy-rls';
import { BearerTokens } from '@tally/auth';
import { PolicyStore } from '@tally/policy';
import { newRequestId, Tracing } from '@tally/observability';
import { GrpcCallerAuth, isRefusal } from './grpc-auth';
import type { GrpcCallInfo } from './grpc-call-info';
import { traceDecisions } from './decision-span';

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
 * Authentication and the in-flight limit are not here: the server decides both from the metadata,
 * before the request is read (see `GrpcRlsServer`).
 */
@Injectable()
export class GrpcRlsService {
  private readonly logger = new Logger('EnvoyRls');
  private readonly limits: RlsRequestLimits;
  private readonly xRateLimitHeaders: boolean;
  private readonly auth: GrpcCallerAuth;

  constructor(
    private readonly decisions: DecisionService,
    private readonly store: PolicyStore,
    tokens: BearerTokens,
    @Inject(TALLY_CONFIG) config: TallyConfig,
    private readonly tracing: Tracing,
  ) {
    this.auth = new GrpcCallerAuth(tokens);
    this.limits = { maxDescriptors: config.grpcMaxDescriptors };
    this.xRateLimitHeaders = config.grpcXRateLimitHeaders === 'on';
  }

  /**
   * `authorization`: the call's `authorization` metadata; `peer`: its connection. The server already
   * refused a call without an accepted token before its request was read; the grant is looked up
   * again here for the tenant stage, which needs the descriptors (recalled for the peer, not hashed).
   */
  async shouldRateLimit(
    request: RlsRequest,
    authorization: string | string[] | undefined,
    peer?: string,
    call: GrpcCallInfo = { requestId: newRequestId(), traceparent: undefined },
  ): Promise<RlsCallResult> {
    const grant = this.auth.authorize(authorization, peer);
    if (isRefusal(grant)) return { ok: false, ...grant };
    const mapped = toDecisionRequests(request, this.limits);
    if (!mapped.ok) return { ok: false, code: status.INVALID_ARGUMENT, message: mapped.message };
    const outOfScope = this.auth.tenantRefusal(grant, mapped.requests);
    if (outOfScope) {
      this.logger.warn(
        `auth.forbidden: token ${grant.name} on ShouldRateLimit: ${outOfScope.message} (request ${call.requestId})`,
      );
      return { ok: false, ...outOfScope };
    }
    let outcome;
    try {
      const { requests, ruleless } = mapped;
      const decisions = this.tracing.enabled
        ? await traceDecisions(this.tracing, grpcCall(call, requests), (tp) =>
            this.decide(requests, ruleless, tp),
          )
        : await this.decide(requests, ruleless);
      outcome = toRlsOutcome(decisions, {
        xRateLimitHeaders: this.xRateLimitHeaders,
        // a descriptor's limit override is a window the policy file does not have
        windowOf: (policy, window) =>
          this.store.current.policies
            .find((p) => p.name === policy)
            ?.windows.find((w) => w.name === window) ?? overrideWindowSpec(window),
      });
    } catch (error) {
      // The engine turns backend failures into decisions; anything else is a bug, and Envoy's failure
      // mode is the right answer to it.
      this.logger.error(
        `ShouldRateLimit failed (request ${call.requestId}): ${error instanceof Error ? error.stack : String(error)}`,
      );
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

  /** Decides every descriptor but those no rule can fit (`null` in their place: OK, undecided). */
  private async decide(
    requests: readonly DecisionRequest[],
    ruleless: ReadonlySet<number>,
    traceparent?: string,
  ): Promise<readonly (Decision | null)[]> {
    if (ruleless.size === 0) return this.decisions.decideBatch(requests, traceparent);
    const rest = requests.filter((_, i) => !ruleless.has(i));
    const decided = rest.length === 0 ? [] : await this.decisions.decideBatch(rest, traceparent);
    let next = 0;
    return requests.map((_, i) => (ruleless.has(i) ? null : decided[next++]));
  }
}

/** What a decision span records of a gRPC call (tracing on only): the first descriptor's tenant. */
function grpcCall(call: GrpcCallInfo, requests: readonly DecisionRequest[]) {
  const first = requests[0] as DecisionRequest | undefined;
  const tenant = first === undefined ? undefined : (first.selectors as Record<string, unknown>).tenant;
  return { transport: 'grpc', traceparent: call.traceparent, requestId: call.requestId, tenant } as const;
}
