import type {
  TallyClientFailure,
  TallyDecision,
  TallyDecisionRequest,
  TallyLocalFallbackOptions,
  TallyPolicy,
} from './client.types';
import { unreachableDecision } from './decision.mapper';
import type { LocalLimiter, WindowResult } from '@tally/window-math';
import { localLimiter, type LocalAlgorithm } from './local-limiter';
import { parseRateLimitHeaders } from './rate-limit.headers';

/** The policy name of the client's own windows in a result and its headers. */
export const LOCAL_POLICY = 'local_fallback';

const DEFAULT_MAX_KEYS = 10_000;

/**
 * Fail mode `local`: the client's answer from its own bounded limiter when Tally gave none, shaped as
 * the server answers a `local_fallback` policy: degraded (cause `client_unreachable`), allowed (200),
 * denied by quota (429, the window's reason, `Retry-After`), or for a key beyond the bound, the
 * configured overflow (`open`: allowed uncounted; `closed`: 503). Nothing is sent to Tally later: the
 * client has no ledger; the server never saw these requests.
 */
export class LocalFallback {
  private readonly limiter: LocalLimiter<LocalAlgorithm>;
  private readonly key: (request: TallyDecisionRequest) => string;

  private readonly clock: () => number;

  constructor(private readonly options: TallyLocalFallbackOptions) {
    this.clock = options.clock ?? Date.now;
    this.limiter = localLimiter(options.windows, options.share ?? 1, options.maxKeys ?? DEFAULT_MAX_KEYS);
    this.key = options.key ?? selectorsKey;
  }

  /** Keys held in memory now. */
  get size(): number {
    return this.limiter.size;
  }

  decide(request: TallyDecisionRequest, failure: TallyClientFailure): TallyDecision {
    const cost = request.cost ?? 1;
    // One check: every key has the same windows, the options'.
    const verdict = this.limiter.decide(
      [{ id: this.key(request), windows: this.options.windows }],
      cost,
      this.clock(),
    );
    if (verdict.kind === 'overflow')
      return this.options.overflow === 'open'
        ? unreachableDecision('open', failure)
        : {
            ...unreachableDecision('closed', failure),
            message: 'local fallback: the in-memory key bound is reached',
          };
    const windows = this.options.windows.map((w, i) => ({
      name: w.name,
      role: w.role,
      limit: w.limit,
      remaining: verdict.results[0][i].remaining,
      reset_ms: verdict.results[0][i].resetMs,
    }));
    const policies: TallyPolicy[] = [{ name: LOCAL_POLICY, mode: 'enforce', windows }];
    const base = {
      decision_id: null,
      degraded: true,
      degraded_cause: 'client_unreachable',
      replayed: false,
      policies,
      failure,
    } as const;
    if (verdict.kind === 'denied') {
      const w = this.options.windows[verdict.window];
      const result = verdict.results[0][verdict.window];
      const headers = rateLimitHeaders(windows, verdict.window, result);
      return {
        ...base,
        status: 429,
        allowed: false,
        reason: w.role === 'burst' ? 'burst_quota_exhausted' : 'sustained_quota_exhausted',
        code: 'quota.exceeded',
        retry_after_ms: result.retryAfterMs,
        rateLimit: parseRateLimitHeaders(headers),
        rateLimitHeaders: headers,
      };
    }
    const headers = rateLimitHeaders(windows, leastLeft(windows), undefined);
    return {
      ...base,
      status: 200,
      allowed: true,
      reason: null,
      code: null,
      retry_after_ms: 0,
      rateLimit: parseRateLimitHeaders(headers),
      rateLimitHeaders: headers,
    };
  }
}

/** Selectors in name order, so `{a, b}` and `{b, a}` share counters. */
function selectorsKey(request: TallyDecisionRequest): string {
  return JSON.stringify(Object.entries(request.selectors).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function leastLeft(windows: readonly TallyPolicy['windows'][number][]): number {
  let best = 0;
  windows.forEach((w, i) => {
    const b = windows[best];
    if (w.remaining < b.remaining || (w.remaining === b.remaining && w.reset_ms > b.reset_ms)) best = i;
  });
  return best;
}

/** The headers the server would send for this binding window (`Retry-After` on a denial). */
function rateLimitHeaders(
  windows: readonly TallyPolicy['windows'][number][],
  binding: number,
  denied: WindowResult | undefined,
): Record<string, string> {
  const w = windows[binding];
  const reset = String(Math.ceil(w.reset_ms / 1000));
  const headers: Record<string, string> = {
    'ratelimit-name': LOCAL_POLICY,
    'ratelimit-limit': String(w.limit),
    'ratelimit-remaining': String(w.remaining),
    'ratelimit-reset': reset,
    'ratelimit-policy': windows.map((x) => `"${LOCAL_POLICY}.${x.name}";q=${x.limit}`).join(', '),
    ratelimit: `"${LOCAL_POLICY}.${w.name}";r=${w.remaining};t=${reset}`,
  };
  if (denied !== undefined)
    headers['retry-after'] = String(Math.max(1, Math.ceil(denied.retryAfterMs / 1000)));
  return headers;
}
