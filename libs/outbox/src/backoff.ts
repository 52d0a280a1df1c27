/** Exponential backoff for retries against a dependency that is down: quick after a blip, capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(attempt, 0), 20);
  return Math.min(baseMs * 2 ** exponent, maxMs);
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
