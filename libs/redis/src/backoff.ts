/** A source of uniform numbers in [0, 1), like `Math.random`; tests inject their own. */
export type RandomSource = () => number;

/** Exponential backoff ceiling for retries against a dependency that is down: quick after a blip, capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(attempt, 0), 20);
  return Math.min(baseMs * 2 ** exponent, maxMs);
}

/**
 * "Full jitter": a uniform wait in [0, backoff ceiling). Processes that failed together (one Kafka
 * outage hits every relay at once) would otherwise retry in lockstep, every attempt at the same
 * instant, and keep arriving together after it ends. Spread over the whole window, their retries
 * arrive at the rate the window allows rather than in bursts; of the usual jitter schemes this one
 * does the least total work, and it keeps no state between attempts.
 */
export function jitteredBackoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: RandomSource = Math.random,
): number {
  return Math.floor(random() * backoffMs(attempt, baseMs, maxMs));
}

/** A sleep that an abort (shutdown) cuts short, so stopping never waits out a backoff. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
