import {
  BadRequestException,
  type CanActivate,
  type ExecutionContext,
  HttpException,
  Injectable,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { EventEmitter } from 'node:events';
import type { TallyDecision, TallyDecisionRequest } from '../client.types';
import { QUOTA_METADATA } from './client.constants';
import type { QuotaOptions } from './quota.decorator';
import { setResponseHeaders } from './response-headers';
import { TallyClient } from '../tally.client';
import { TallyRequestError } from '../tally-request.error';

/**
 * Requests already decided: the guard may run twice for one request (applied by `@Quota` and also
 * registered app-wide), and a second decision would spend twice. Module-wide because Nest may hold
 * more than one instance of the guard.
 */
const decided = new WeakSet<object>();

/**
 * Asks Tally before a `@Quota` route runs. Allowed: the `RateLimit-*` headers go on the response and
 * the route runs; a concurrency lease the decision took is released when the response is done. Refused: an `HttpException` with the decision's status (429, or 503 / 409 / 413)
 * and the `Retry-After` and `RateLimit-*` headers. Routes without `@Quota` pass untouched.
 */
@Injectable()
export class TallyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly client: TallyClient,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const quota = this.reflector.getAllAndOverride<QuotaOptions | undefined>(QUOTA_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (quota === undefined) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<object>();
    if (decided.has(req)) return true;
    decided.add(req);

    const decision = await this.decide(quota, req);
    const res = http.getResponse<unknown>();
    setResponseHeaders(res, decision.rateLimitHeaders);
    if (decision.allowed) {
      if (decision.lease !== undefined) this.releaseWhenDone(res, decision.lease.id);
      return true;
    }
    throw new HttpException(refusalBody(decision), decision.status);
  }

  /**
   * A concurrency lease is held while the route runs and given back when the response is done: sent,
   * failed, or its connection gone (`close` fires for all three). A release Tally cannot take leaves
   * the lease to end at its expiry; it never fails the response, which is already out.
   */
  private releaseWhenDone(res: unknown, leaseId: string): void {
    // Fastify hands Nest its reply (the Node response is `raw`); Express, the Node response itself.
    const raw = ((res as { raw?: unknown }).raw ?? res) as Partial<EventEmitter>;
    if (typeof raw.once !== 'function') return;
    raw.once('close', () => {
      this.client.release(leaseId).catch(() => undefined);
    });
  }

  private async decide(quota: QuotaOptions, req: object): Promise<TallyDecision> {
    try {
      return await this.client.decide(toRequest(quota, req), { failMode: quota.failMode });
    } catch (error) {
      // The selectors and the idempotency key come from the incoming request: a missing or malformed
      // identity or key (say an `Idempotency-Key` header with a space) is its sender's fault (400);
      // any other rejection is this service's bug and stays a 500.
      if (error instanceof TallyRequestError && isSendersFault(error.code)) {
        throw new BadRequestException({ code: error.code, message: error.message });
      }
      throw error;
    }
  }
}

function isSendersFault(code: string): boolean {
  return code.startsWith('selector.') || code === 'idempotency_key.invalid';
}

function toRequest(quota: QuotaOptions, req: object): TallyDecisionRequest {
  const cost = typeof quota.cost === 'function' ? quota.cost(req) : quota.cost;
  const attributes = typeof quota.attributes === 'function' ? quota.attributes(req) : quota.attributes;
  const idempotencyKey = quota.idempotencyKey?.(req);
  return {
    selectors: quota.selectors(req),
    ...(attributes !== undefined ? { attributes } : {}),
    ...(cost !== undefined ? { cost } : {}),
    ...(idempotencyKey !== undefined ? { idempotency_key: idempotencyKey } : {}),
  };
}

const MESSAGES: Readonly<Record<TallyDecision['status'], string>> = {
  200: 'allowed',
  409: 'the idempotency key was already used by a different request',
  413: 'the request costs more than the quota allows at once',
  429: 'quota exceeded',
  503: 'the quota service is unavailable; retry shortly',
};

function refusalBody(decision: TallyDecision): Record<string, unknown> {
  return {
    code: decision.code,
    message: decision.message ?? MESSAGES[decision.status],
    reason: decision.reason,
    retry_after_ms: decision.retry_after_ms,
    ...(decision.decision_id !== null ? { decision_id: decision.decision_id } : {}),
  };
}
