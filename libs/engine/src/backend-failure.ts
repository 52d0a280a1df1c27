import type { BackendFailure } from './decision.types';

/** A Redis step that missed its deadline. It may still have run: see ADR 0001, "timeouts vs commits". */
export class BackendTimeoutError extends Error {
  constructor(ms: number) {
    super(`redis did not answer within ${ms} ms`);
    this.name = BackendTimeoutError.name;
  }
}

/** Refused without trying: the circuit breaker is open. */
export class BreakerOpenError extends Error {
  constructor() {
    super('redis circuit breaker is open');
    this.name = BreakerOpenError.name;
  }
}

/** Redis states that mean "not serving now" rather than "the script is wrong". */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS|MOVED|ASK)\b/;

/**
 * - `backend_timeout`: the deadline passed (the step may have committed);
 * - `backend_unavailable`: no connection, connection lost, breaker open, or Redis says it cannot serve;
 * - `backend_error`: Redis answered with an error to our script (a bug or an incompatible server).
 */
export function classifyBackendError(error: unknown): BackendFailure {
  if (error instanceof BackendTimeoutError) return 'backend_timeout';
  if (error instanceof BreakerOpenError) return 'backend_unavailable';
  if (error instanceof Error && error.name === 'ReplyError') {
    return UNAVAILABLE_REPLIES.test(error.message) ? 'backend_unavailable' : 'backend_error';
  }
  if (error instanceof Error && /timed out/i.test(error.message)) return 'backend_timeout';
  return 'backend_unavailable';
}

/** Rejects with BackendTimeoutError after `ms`; the underlying command is not cancelled (Redis cannot be). */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackendTimeoutError(ms)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
