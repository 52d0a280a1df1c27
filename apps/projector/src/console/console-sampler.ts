import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { parseExposition, SampleRing, type RateSeries } from '@tally/observability';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';
import { DECISIONS, POLICY_DECISIONS } from './overview-series';
import { upstreamGet } from './upstream.client';

const HOUR_MS = 3_600_000;
const DECISION_METRICS = new Set([DECISIONS, POLICY_DECISIONS]);
const RELAY_METRICS = new Set([
  'tally_outbox_length',
  'tally_outbox_pending',
  'tally_outbox_oldest_age_seconds',
]);

/** A service's readiness as last seen; `unreachable` / `not_configured` are the console's own words. */
export interface SeenHealth {
  readonly status: 'healthy' | 'degraded' | 'unavailable' | 'unreachable' | 'not_configured';
  readonly components: Record<string, { status: string }>;
}

/**
 * Every `TALLY_CONSOLE_SAMPLE_INTERVAL`, the decision API's and the relay's `/metrics` and `/readyz`:
 * an hour of decision counters (the Overview's rates) and the newest outbox gauges and health.
 * A failed sample is skipped (the chart shows a gap in time, not a made-up zero) and logged once per
 * change, so a stopped decision API does not flood the log.
 */
@Injectable()
export class ConsoleSampler implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('console');
  readonly decisions: SampleRing;
  private readonly relay = new SampleRing(1);
  private readonly health = new Map<string, SeenHealth>();
  private timer?: NodeJS.Timeout;
  private failing = new Set<string>();

  constructor(@Inject(CONSOLE_OPTIONS) private readonly options: ConsoleOptions) {
    this.decisions = new SampleRing(Math.ceil(HOUR_MS / options.sampleMs) + 1);
  }

  onModuleInit(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.options.sampleMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One round now (tests and the first page load need not wait a whole interval). */
  async sample(): Promise<void> {
    await Promise.all([
      this.scrape('decision-api', this.options.decisionApiUrl, DECISION_METRICS, this.decisions),
      this.scrape('relay', this.options.relayUrl, RELAY_METRICS, this.relay),
    ]);
  }

  get intervalMs(): number {
    return this.options.sampleMs;
  }

  rates(group: Parameters<SampleRing['rates']>[0]): RateSeries[] {
    return this.decisions.rates(group);
  }

  /** The relay's newest outbox gauges, or null before a sample (or without a relay URL). */
  outbox(): { sampled_at: string; length: number; pending: number; oldest_age_seconds: number } | null {
    const latest = this.relay.latest;
    if (latest === undefined) return null;
    const value = (name: string) => latest.series.find((s) => s.name === name)?.value ?? 0;
    return {
      sampled_at: new Date(latest.atMs).toISOString(),
      length: value('tally_outbox_length'),
      pending: value('tally_outbox_pending'),
      oldest_age_seconds: value('tally_outbox_oldest_age_seconds'),
    };
  }

  healthOf(service: string): SeenHealth {
    return this.health.get(service) ?? { status: 'not_configured', components: {} };
  }

  private async scrape(
    service: string,
    base: string | undefined,
    names: ReadonlySet<string>,
    ring: SampleRing,
  ) {
    if (base === undefined) return;
    try {
      const atMs = Date.now();
      const [metrics, ready] = await Promise.all([
        upstreamGet(base, service, '/metrics'),
        upstreamGet(base, service, '/readyz'),
      ]);
      if (metrics.status === 200) ring.push({ atMs, series: parseExposition(metrics.text, names) });
      this.health.set(service, ready.json() as SeenHealth);
      if (this.failing.delete(service)) this.logger.log(`console: ${service} answers again`);
    } catch (error) {
      this.health.set(service, { status: 'unreachable', components: {} });
      if (!this.failing.has(service))
        this.logger.warn(`console: sampling ${service} failed: ${(error as Error).message}`);
      this.failing.add(service);
    }
  }
}
