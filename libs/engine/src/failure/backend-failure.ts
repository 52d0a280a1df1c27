import type { BackendFailure } from '../plan/decision.types';

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

/**
 * Rejects with BackendTimeoutError after `ms`; the underlying command is not cancelled (Redis cannot
 * be). The rejection waits one more turn of the event loop (`setImmediate`): timers run before I/O
 * in a loop turn, so after a stall of this process (GC, a CPU-starved machine) a reply that is
 * already in the socket is read first and wins the race. A stall of the API is not a Redis timeout.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  // One promise settled by whichever comes first, not `Promise.race` + `finally`: this runs for every
  // Redis step, and those cost four more promises and two more microtask turns per reply.
  return new Promise<T>((resolve, reject) => {
    let immediate: NodeJS.Immediate | undefined;
    const timer = setTimeout(() => {
      immediate = setImmediate(() => reject(new BackendTimeoutError(ms)));
    }, ms);
    const settle = (): void => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    };
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      // The work's own rejection, passed on as it is (ioredis rejects with Errors).
      (error: Error) => {
        settle();
        reject(error);
      },
    );
  });
}

/**
 * Share of the step deadline added per script of a pipeline. A pipeline of n scripts is n steps in
 * one round trip: Redis runs them one after the other, behind whatever else is queued, so one fixed
 * deadline would time whole batches out on a busy machine while every script is healthy. With the
 * default 100 ms: 1 script → 102 ms, 100 → 300 ms, 1000 → 2.1 s.
 */
export const PIPELINE_SHARE_PER_SCRIPT = 0.02;

/** The deadline of a pipeline of `scripts` decide scripts, from the deadline of one step. */
export function pipelineDeadlineMs(stepMs: number, scripts: number): number {
  return Math.ceil(stepMs * (1 + PIPELINE_SHARE_PER_SCRIPT * scripts));
}

/**
 * Whether a failed step counts toward the circuit breaker. The breaker exists to stop hammering a
 * dead Redis, so a timeout counts only when Redis gave no sign of life while the step waited: if
 * another step was answered after this one started, Redis is alive and merely slow (or this process
 * is overloaded), and opening the breaker would turn a slowdown into a full outage of fail_closed
 * traffic. A half-open probe always counts: its failure must re-open the breaker.
 */
export function countsAsOutage(
  failure: BackendFailure,
  step: { readonly startedAt: number; readonly lastAnswerAt: number; readonly probing: boolean },
): boolean {
  if (failure === 'backend_error') return false;
  if (failure === 'backend_timeout' && !step.probing) return step.lastAnswerAt <= step.startedAt;
  return true;
}
