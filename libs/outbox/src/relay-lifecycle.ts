import { Inject, Injectable, Logger } from '@nestjs/common';
import { jitteredBackoffMs, sleep } from '@tally/redis';
import { RELAY_OPTIONS } from './outbox.constants';
import { RelayMetrics, type RelayStage } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';

/** Failures are logged on the first occurrence, then every this many, then on recovery. */
const LOG_EVERY = 20;

/**
 * Running or stopping, and the retry discipline every Redis/Kafka step of the relay follows: a failed
 * step is retried with jittered backoff until it succeeds. Nothing is ever skipped on failure, since skipping
 * a produce or an acknowledgement is how events get lost or the outbox grows without bound. Once
 * stopping, a step gets until the shutdown deadline; past it the step is abandoned and its entries
 * stay pending for another relay to re-claim.
 */
@Injectable()
export class RelayLifecycle {
  private readonly logger = new Logger('OutboxRelay');
  private readonly controller = new AbortController();
  private deadline = Infinity;

  constructor(
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
    private readonly metrics: RelayMetrics,
  ) {}

  get stopping(): boolean {
    return this.controller.signal.aborted;
  }

  /** Aborted when stopping: cuts idle sleeps short. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  stop(): void {
    this.deadline = performance.now() + this.options.shutdownGraceMs;
    this.controller.abort();
  }

  /** True once stopping and the grace period is over. */
  get expired(): boolean {
    return performance.now() > this.deadline;
  }

  /**
   * Runs `step` until it succeeds; `false` if the shutdown deadline passed first. `onError` sees
   * each failure (e.g. to mark Kafka down in health).
   */
  async retry(
    stage: RelayStage,
    step: () => Promise<unknown>,
    onError?: (e: Error) => void,
  ): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await step();
        if (attempt > 0) this.logger.log(`${stage} recovered after ${attempt} failed attempts`);
        return true;
      } catch (caught) {
        const error = caught instanceof Error ? caught : new Error(String(caught));
        this.metrics.errors.inc({ stage });
        onError?.(error);
        if (attempt % LOG_EVERY === 0) {
          this.logger.warn(`${stage} failed (attempt ${attempt + 1}), retrying: ${error.message}`);
        }
        if (this.expired) return false;
        // Jittered, so relays that a Kafka outage failed together do not retry together.
        const wait = jitteredBackoffMs(
          attempt,
          this.options.retryBaseMs,
          this.options.retryMaxMs,
          this.options.random,
        );
        // Once stopping, the sleep is no longer cut short (that would spin) but bounded by the deadline.
        const bounded = Math.min(wait, Math.max(0, this.deadline - performance.now()));
        await sleep(bounded, this.stopping ? undefined : this.signal);
        if (this.expired) return false;
      }
    }
  }
}
