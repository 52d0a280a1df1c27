/**
 * Stops hammering a dead Redis: after `failureThreshold` consecutive backend failures the breaker
 * opens and every call fails fast for `cooldownMs`; then one probe is let through (half-open). The
 * probe's success closes it, its failure re-opens it for another cooldown.
 */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold: number;
  /** How long it stays open before a probe. */
  readonly cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 5, cooldownMs: 1000 };

export class CircuitBreaker {
  private failures = 0;
  private openedAt = 0;
  private probing = false;
  private current: BreakerState = 'closed';

  constructor(
    private readonly options: BreakerOptions,
    private readonly clock: () => number,
    private readonly onChange: (state: BreakerState) => void = () => undefined,
  ) {}

  get state(): BreakerState {
    return this.current;
  }

  /** May a call go to Redis now? In half-open, only the single probe may. */
  tryAcquire(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'open') {
      if (this.clock() - this.openedAt < this.options.cooldownMs) return false;
      this.transition('half_open');
    }
    if (this.probing) return false;
    this.probing = true;
    return true;
  }

  /** Milliseconds until a probe will be allowed (0 unless open). */
  remainingCooldownMs(): number {
    return this.current === 'open'
      ? Math.max(0, this.options.cooldownMs - (this.clock() - this.openedAt))
      : 0;
  }

  success(): void {
    this.failures = 0;
    this.probing = false;
    if (this.current !== 'closed') this.transition('closed');
  }

  failure(): void {
    this.failures++;
    const probeFailed = this.current === 'half_open';
    this.probing = false;
    if (probeFailed || (this.current === 'closed' && this.failures >= this.options.failureThreshold)) {
      this.openedAt = this.clock();
      this.transition('open');
    }
  }

  /** A call that got an answer which says nothing about availability (e.g. a script error). */
  release(): void {
    this.probing = false;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  private transition(state: BreakerState): void {
    this.current = state;
    this.onChange(state);
  }
}
