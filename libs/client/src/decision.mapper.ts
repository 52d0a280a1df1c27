import type {
  TallyBatchItem,
  TallyClientFailure,
  TallyDecision,
  TallyDenyReason,
  TallyFailMode,
  TallyFieldError,
} from './client.types';
import { NO_RATE_LIMIT, parseRateLimitHeaders } from './rate-limit.headers';
import { TallyRequestError } from './tally-request.error';

/** What one HTTP answer means to the caller: a decision, its own bug, or no answer at all. */
export type Interpreted =
  | { readonly kind: 'decision'; readonly decision: TallyDecision }
  | { readonly kind: 'error'; readonly error: TallyRequestError }
  | { readonly kind: 'failure'; readonly failure: TallyClientFailure };

/** The smallest back-off HTTP can express, as the server uses for its own 503s. */
const UNREACHABLE_RETRY_AFTER_MS = 1000;

/** The statuses at which the server answers with a decision body. */
const DECISION_STATUSES = new Set([200, 409, 413, 429, 503]);

/**
 * Maps one answer of `POST /v1/decisions`. Only a body that is a decision counts as one: a 413 from
 * the body limit or a 503 from overload shedding carry `{code, message}` and are not decisions.
 */
export function interpretResponse(
  status: number,
  rateLimitHeaders: Readonly<Record<string, string>>,
  body: unknown,
): Interpreted {
  if (isDecisionBody(body)) {
    if (DECISION_STATUSES.has(status)) {
      const decision = toDecision(status as TallyDecision['status'], body, rateLimitHeaders);
      return { kind: 'decision', decision };
    }
    if (status >= 400 && status < 500) return { kind: 'error', error: requestError(status, body) };
  }
  if (status === 429) return { kind: 'decision', decision: bareDenial(rateLimitHeaders) };
  if (status >= 400 && status < 500) return { kind: 'error', error: requestError(status, body) };
  if (status >= 500) {
    const code = isRecord(body) && typeof body.code === 'string' ? ` ${body.code}` : '';
    return { kind: 'failure', failure: { kind: 'server_error', message: `HTTP ${status}${code}` } };
  }
  return {
    kind: 'failure',
    failure: { kind: 'invalid_response', message: `HTTP ${status}: not a decision` },
  };
}

/** One entry of `POST /v1/decisions:batch`'s `results`: its own status beside the decision body. */
export function interpretBatchItem(item: unknown): TallyBatchItem {
  const status = isRecord(item) && typeof item.status === 'number' ? item.status : 0;
  const interpreted = interpretResponse(status, {}, item);
  switch (interpreted.kind) {
    case 'decision':
      return { ok: true, decision: interpreted.decision };
    case 'error':
      return { ok: false, error: interpreted.error };
    case 'failure':
      return {
        ok: false,
        error: new TallyRequestError(status, 'response.invalid', interpreted.failure.message),
      };
  }
}

/**
 * The client's own answer when Tally gave none. `open` lets the request through, marked degraded so
 * the caller can count or log it; `closed` refuses it like the server's fail_closed 503.
 */
export function unreachableDecision(
  mode: Exclude<TallyFailMode, 'local'>,
  failure: TallyClientFailure,
): TallyDecision {
  const base = { decision_id: null, replayed: false, policies: [], rateLimit: NO_RATE_LIMIT, failure };
  if (mode === 'open') {
    return {
      ...base,
      status: 200,
      allowed: true,
      reason: null,
      code: null,
      retry_after_ms: 0,
      degraded: true,
      degraded_cause: 'client_unreachable',
      rateLimitHeaders: {},
    };
  }
  const retryAfter = String(UNREACHABLE_RETRY_AFTER_MS / 1000);
  return {
    ...base,
    status: 503,
    allowed: false,
    reason: 'backend_unavailable',
    code: 'backend.unavailable',
    retry_after_ms: UNREACHABLE_RETRY_AFTER_MS,
    degraded: false,
    rateLimit: { ...NO_RATE_LIMIT, retryAfterSeconds: Number(retryAfter) },
    rateLimitHeaders: { 'retry-after': retryAfter },
  };
}

type DecisionBody = Omit<TallyDecision, 'status' | 'rateLimit' | 'rateLimitHeaders' | 'failure'>;

function toDecision(
  status: TallyDecision['status'],
  body: DecisionBody,
  rateLimitHeaders: Readonly<Record<string, string>>,
): TallyDecision {
  const decision: TallyDecision = {
    status,
    allowed: body.allowed,
    decision_id: body.decision_id,
    reason: body.reason,
    code: body.code,
    retry_after_ms: body.retry_after_ms,
    degraded: body.degraded,
    replayed: body.replayed,
    policies: body.policies,
    rateLimit: parseRateLimitHeaders(rateLimitHeaders),
    rateLimitHeaders,
  };
  // Optional fields stay absent rather than `undefined`, so results compare and serialize cleanly.
  if (body.degraded_cause !== undefined) Object.assign(decision, { degraded_cause: body.degraded_cause });
  if (body.message !== undefined) Object.assign(decision, { message: body.message });
  if (body.lease !== undefined) Object.assign(decision, { lease: body.lease });
  return decision;
}

/** A 429 without a decision body (a proxy in front of Tally): still a denial, never an exception. */
function bareDenial(rateLimitHeaders: Readonly<Record<string, string>>): TallyDecision {
  const rateLimit = parseRateLimitHeaders(rateLimitHeaders);
  return {
    status: 429,
    allowed: false,
    decision_id: null,
    reason: null,
    code: 'quota.exceeded',
    retry_after_ms: (rateLimit.retryAfterSeconds ?? 1) * 1000,
    degraded: false,
    replayed: false,
    policies: [],
    rateLimit,
    rateLimitHeaders,
  };
}

export function requestError(status: number, body: unknown): TallyRequestError {
  if (!isRecord(body)) return new TallyRequestError(status, `http.${status}`, `HTTP ${status}`);
  const code = typeof body.code === 'string' ? body.code : `http.${status}`;
  const message = typeof body.message === 'string' ? body.message : `HTTP ${status}`;
  const errors = Array.isArray(body.errors) ? (body.errors as TallyFieldError[]) : [];
  const reason = typeof body.reason === 'string' ? (body.reason as TallyDenyReason) : null;
  return new TallyRequestError(status, code, message, errors, reason);
}

function isDecisionBody(body: unknown): body is DecisionBody {
  return (
    isRecord(body) &&
    typeof body.allowed === 'boolean' &&
    typeof body.decision_id === 'string' &&
    typeof body.retry_after_ms === 'number' &&
    Array.isArray(body.policies)
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
