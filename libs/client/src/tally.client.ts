import type {
  TallyBatchItem,
  TallyCallOptions,
  TallyClientOptions,
  TallyDecision,
  TallyDecisionRequest,
  TallyFailMode,
} from './client.types';
import { interpretBatchItem, interpretResponse, unreachableDecision } from './decision.mapper';
import { HttpTransport, TransportFailure, type RawResponse } from './http.transport';
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
  /** Runtime overrides (`/v1/overrides`): list, get, set, remove; needs an overrides or admin token. */
  readonly overrides: TallyOverrides;

  constructor(options: TallyClientOptions) {
    this.transport = new HttpTransport(options.baseUrl, options.maxSockets ?? DEFAULT_MAX_SOCKETS);
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.failMode = options.failMode ?? 'open';
    // Admin calls are not on a hot path: at least 5 s, not the decision deadline.
    this.overrides = new TallyOverrides(this.transport, this.token, Math.max(this.timeoutMs, 5_000));
  }

  /** `POST /v1/decisions`. */
  async decide(request: TallyDecisionRequest, options: TallyCallOptions = {}): Promise<TallyDecision> {
    const retry = request.idempotency_key !== undefined;
    const answer = await this.post('v1/decisions', request, retry, options);
    if (answer instanceof TransportFailure) {
      return unreachableDecision(options.failMode ?? this.failMode, answer.failure);
    }
    const interpreted = interpretResponse(answer.status, answer.rateLimitHeaders, answer.body);
    switch (interpreted.kind) {
      case 'decision':
        return interpreted.decision;
      case 'error':
        throw interpreted.error;
      case 'failure':
        return unreachableDecision(options.failMode ?? this.failMode, interpreted.failure);
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
    const retry = requests.length > 0 && requests.every((r) => r.idempotency_key !== undefined);
    const answer = await this.post('v1/decisions:batch', { requests }, retry, options);
    const failMode = options.failMode ?? this.failMode;
    const unanswered = (failure: TransportFailure['failure']): TallyBatchItem[] =>
      requests.map(() => ({ ok: true, decision: unreachableDecision(failMode, failure) }));
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
