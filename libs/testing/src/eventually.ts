import { setTimeout as sleepFor } from 'node:timers/promises';

/** How long `eventually` keeps asking, and how often; each suite passes the pace its subject needs. */
export interface EventuallyOptions {
  /** Fails after this long without `done` holding. */
  readonly timeoutMs: number;
  /** Pause between two probes. */
  readonly intervalMs: number;
  /** What is awaited, for the failure message. */
  readonly what?: string;
}

/**
 * Probes until `done` holds and resolves with that value; fails with the last value seen, so a
 * timeout says how far the system got. The probe runs at least once, even with a zero timeout.
 */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  options: EventuallyOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      const what = options.what === undefined ? '' : ` waiting for ${options.what}`;
      throw new Error(`timed out after ${options.timeoutMs} ms${what}; last value: ${JSON.stringify(value)}`);
    }
    await sleep(options.intervalMs);
  }
}

/** Lets time pass (a window rolls over, a process reacts); prefer `eventually` when there is a signal. */
export function sleep(ms: number): Promise<void> {
  return sleepFor(ms);
}
