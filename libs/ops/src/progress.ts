/** How far a long read is: for the progress line (rate, ETA) and the final figures. */
export interface ProgressSnapshot {
  readonly done: number;
  readonly total: number;
  readonly elapsedMs: number;
  /** Items per second since the start. */
  readonly perSecond: number;
  /** Estimated time left at the average rate so far; null before anything was done. */
  readonly etaMs: number | null;
}

export type ProgressListener = (progress: ProgressSnapshot) => void;

/** Turns a running count into rate and ETA. `clock` in ms (tests pass a fake one). */
export class ProgressMeter {
  private readonly started: number;

  constructor(
    private readonly total: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.started = clock();
  }

  snapshot(done: number): ProgressSnapshot {
    const elapsedMs = Math.max(0, this.clock() - this.started);
    const perSecond = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
    const left = Math.max(0, this.total - done);
    const etaMs = perSecond > 0 ? Math.round((left / perSecond) * 1000) : null;
    return { done, total: this.total, elapsedMs, perSecond, etaMs };
  }
}

/** Calls `listener` at most every `everyMs`, plus once with `final()`, so stderr is not flooded. */
export function throttled(
  listener: ProgressListener | undefined,
  everyMs = 1000,
  clock = () => performance.now(),
) {
  let last = -Infinity;
  return {
    report(snapshot: () => ProgressSnapshot): void {
      if (listener === undefined) return;
      const now = clock();
      if (now - last < everyMs) return;
      last = now;
      listener(snapshot());
    },
    final(snapshot: ProgressSnapshot): void {
      listener?.(snapshot);
    },
  };
}
