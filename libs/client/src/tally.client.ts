import type {
  TallyBatchItem,
  TallyCallOptions,
  TallyClientOptions,
  TallyDecision,
  TallyDecisionRequest,
  TallyExtendOptions,
  TallyExtension,
  TallyFailMode,
  TallyLeaseOptions,
  TallyLeaseRun,
  TallyRelease,
} from './client.types';
import { interpretBatchItem, interpretResponse, unreachableDecision } from './decision.mapper';
import { interpretExtension, interpretRelease } from './release.mapper';
import { HttpTransport, TransportFailure, type RawResponse } from './http.transport';
import { LocalFallback } from './local-fallback';
import { TallyOverrides } from './tally-overrides';

const DEFAULT_TIMEOUT_MS = 200;
const DEFAULT_MAX_SOCKETS = 64;

/**
 * The decision API client. Answers are values: allowed, denied (429), conflict (409), cost too large
 * (413), backend refused (503). A call Tally itself rejects (400/401/…) throws `TallyRequestError`;
 * when Tally cannot be reached in time the client answers by its fail mode instead of throwing, so a
 * hot path never needs a try/catch around its quota check.
 */
export class TallyClient {
  private readonly transport: HttpTransport;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly failMode: TallyFailMode;
  private readonly local: LocalFallback | undefined;
  /** Runtime overrides (`/v1/overrides`): list, get, set, remove; needs an overrides or admin token. */
  readonly overrides: TallyOverrides;

  constructor(options: TallyClientOptions) {
    this.transport = new HttpTransport(options.baseUrl, options.maxSockets ?? DEFAULT_MAX_SOCKETS);
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.failMode = options.failMode ?? 'open';
    this.local = options.localFallback === undefined ? undefined : new LocalFallback(options.localFallback);
    if (this.failMode === 'local' && this.local === undefined)
      throw new Error('failMode "local" needs the localFallback option (its windows)');
    // Admin calls are not on a hot path: at least 5 s, not the decision deadline.
    this.overrides = new TallyOverrides(this.transport, this.token, Math.max(this.timeoutMs, 5_000));
  }

  /** Keys the local fallback limiter holds in memory now (0 without `localFallback`). */
  get localFallbackKeys(): number {
    return this.local?.size ?? 0;
  }

  /** `POST /v1/decisions`. */
  async decide(request: TallyDecisionRequest, options: TallyCallOptions = {}): Promise<TallyDecision> {
    this.checkFailMode(options);
    const retry = request.idempotency_key !== undefined;
    const answer = await this.post('v1/decisions', request, retry, options);
    if (answer instanceof TransportFailure) return this.unanswered(request, answer.failure, options);
    const interpreted = interpretResponse(answer.status, answer.rateLimitHeaders, answer.body);
    switch (interpreted.kind) {
      case 'decision':
        return interpreted.decision;
      case 'error':
        throw interpreted.error;
      case 'failure':
        return this.unanswered(request, interpreted.failure, options);
    }
  }

  /**
   * `POST /v1/decisions:batch`: up to 1000 independent decisions, answered in order. An invalid item
   * is an `{ok: false}` entry, not an exception; a batch Tally cannot answer gets the fail-mode result
   * for every item. Batch items carry no rate-limit headers (`rateLimit` is empty).
   */
  async decideBatch(
    requests: readonly TallyDecisionRequest[],
    options: TallyCallOptions = {},
  ): Promise<TallyBatchItem[]> {
    this.checkFailMode(options);
    const retry = requests.length > 0 && requests.every((r) => r.idempotency_key !== undefined);
    const answer = await this.post('v1/decisions:batch', { requests }, retry, options);
    const unanswered = (failure: TransportFailure['failure']): TallyBatchItem[] =>
      requests.map((r) => ({ ok: true, decision: this.unanswered(r, failure, options) }));
    if (answer instanceof TransportFailure) return unanswered(answer.failure);
    const results = (answer.body as { results?: unknown } | undefined)?.results;
    if (answer.status === 200 && Array.isArray(results) && results.length === requests.length) {
      return results.map(interpretBatchItem);
    }
    const interpreted = interpretResponse(answer.status, answer.rateLimitHeaders, answer.body);
    if (interpreted.kind === 'error') throw interpreted.error;
    const message = `HTTP ${answer.status}: not a batch answer`;
    return unanswered(
      interpreted.kind === 'failure' ? interpreted.failure : { kind: 'invalid_response', message },
    );
  }

  /**
   * `POST /v1/leases/{id}:release`: gives a concurrency lease's units back. Releasing is idempotent,
   * so a call that lost its connection is retried once. A release Tally refuses (an unknown or
   * malformed id, a token without the tenant) throws `TallyRequestError`; when Tally cannot be
   * reached the answer is `{ok: false, failure}` and the lease ends at its expiry by itself.
   */
  async release(leaseId: string, options: Omit<TallyCallOptions, 'failMode'> = {}): Promise<TallyRelease> {
    const answer = await this.post(`v1/leases/${encodeURIComponent(leaseId)}:release`, {}, true, options);
    if (answer instanceof TransportFailure) return { ok: false, failure: answer.failure };
    return interpretRelease(answer.status, answer.body);
  }

  /**
   * `POST /v1/leases/{id}:extend`: keeps a live lease's units for `ttlMs` more from now (default: the
   * lease's `lease_ttl`, also the most it may ask). Call it before `expires_at`, e.g. every half TTL,
   * to keep a slot through long work. Repeating an extension is harmless, so a call that lost its
   * connection is retried once. A lease that expired or was released throws `TallyRequestError`
   * (`lease.expired` / `lease.released`, 409): its units may be someone else's, stop or take a new
   * lease. When Tally cannot be reached the answer is `{ok: false, failure}` and the lease keeps the
   * expiry it had.
   */
  async extend(leaseId: string, options: TallyExtendOptions = {}): Promise<TallyExtension> {
    const body = options.ttlMs === undefined ? {} : { ttl_ms: options.ttlMs };
    const answer = await this.post(`v1/leases/${encodeURIComponent(leaseId)}:extend`, body, true, options);
    if (answer instanceof TransportFailure) return { ok: false, failure: answer.failure };
    return interpretExtension(answer.status, answer.body);
  }

  /**
   * Runs `work` under a concurrency lease: decides `request`; refused → `{ran: false, decision}`
   * without running it; allowed → runs it and releases the lease when it ends, whether it returned or
   * threw (the work's error is rethrown after the release). A decision without a lease (no
   * concurrency window applies, or a degraded fail-open answer) runs the work with nothing to release.
   */
  async withLease<T>(
    request: TallyDecisionRequest,
    work: (decision: TallyDecision) => Promise<T> | T,
    options: TallyLeaseOptions = {},
  ): Promise<TallyLeaseRun<T>> {
    const decision = await this.decide(request, options);
    if (!decision.allowed) return { ran: false, decision };
    const lease = decision.lease;
    try {
      return { ran: true, value: await work(decision), decision };
    } finally {
      if (lease !== undefined) {
        // Not under the caller's signal: work that was cancelled must still give its units back.
        const released = await this.release(lease.id, { timeoutMs: options.timeoutMs }).catch(
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (!released.ok)
          options.onReleaseError?.('error' in released ? released.error : released.failure, lease);
      }
    }
  }

  /** The fail mode's answer when Tally gave none (`local`: the local limiter decides, in call order). */
  private unanswered(
    request: TallyDecisionRequest,
    failure: TransportFailure['failure'],
    options: TallyCallOptions,
  ): TallyDecision {
    const mode = options.failMode ?? this.failMode;
    if (mode !== 'local') return unreachableDecision(mode, failure);
    if (this.local === undefined)
      throw new Error('failMode "local" needs the localFallback option (its windows)');
    return this.local.decide(request, failure);
  }

  /** A per-call `local` without a limiter is a bug: said at once, not only once Tally is down. */
  private checkFailMode(options: TallyCallOptions): void {
    if (options.failMode === 'local' && this.local === undefined)
      throw new Error('failMode "local" needs the localFallback option (its windows)');
  }

  /** Closes the keep-alive sockets. */
  close(): void {
    this.transport.close();
  }

  /**
   * One POST within one deadline. Only a request carrying an idempotency key is retried, once, and
   * only after a connection error: Tally answers a replay with the stored decision, so a request the
   * server did process before the connection broke is never counted twice.
   */
  private async post(
    path: string,
    payload: unknown,
    retryable: boolean,
    options: TallyCallOptions,
  ): Promise<RawResponse | TransportFailure> {
    const deadline = Date.now() + (options.timeoutMs ?? this.timeoutMs);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.transport.post(path, this.token, payload, deadline, options.signal);
      } catch (error) {
        if (!(error instanceof TransportFailure)) throw error;
        if (!(retryable && error.retryable && attempt === 0 && Date.now() < deadline)) return error;
      }
    }
  }
}
