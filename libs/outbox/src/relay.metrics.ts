import { Inject, Injectable } from '@nestjs/common';
import { allShardKeys } from '@tally/engine';
import { METRICS_REGISTRY } from '@tally/observability';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RELAY_OPTIONS } from './outbox.constants';
import { OutboxStreams, type OutboxStats } from './outbox-streams';
import type { ResolvedRelayOptions } from './relay.options';

/** Where a relay error happened (the `stage` label). */
export type RelayStage = 'provision' | 'groups' | 'read' | 'produce' | 'ack' | 'claim' | 'denials';

/** Scrapes closer together than this share one Redis round of XLEN/XRANGE/XPENDING. */
const STATS_CACHE_MS = 1000;

/**
 * Prometheus series of the relay. The outbox gauges are measured on scrape, from Redis, so they are
 * true even while this relay is stuck (Kafka down): a growing `tally_outbox_length` and
 * `tally_outbox_oldest_age_seconds` are exactly what an operator alerts on.
 */
@Injectable()
export class RelayMetrics {
  readonly published: Counter<'topic'>;
  readonly produceRequests: Counter;
  readonly errors: Counter<'stage'>;
  readonly reclaimed: Counter;
  readonly deadLettered: Counter;
  readonly denials: Counter;
  readonly batchSeconds: Histogram;
  private snapshot?: { at: number; stats: Promise<OutboxStats> };

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(RELAY_OPTIONS) options: ResolvedRelayOptions,
    streams: OutboxStreams,
  ) {
    const registers = [registry];
    const keys = allShardKeys(options.shards).map((k) => k.outbox);
    const stats = (): Promise<OutboxStats> => {
      const now = performance.now();
      if (this.snapshot === undefined || now - this.snapshot.at > STATS_CACHE_MS) {
        this.snapshot = { at: now, stats: streams.stats(keys) };
      }
      return this.snapshot.stats;
    };
    this.published = new Counter({
      name: 'tally_relay_events_published_total',
      help: 'Events Kafka confirmed (acks=all), by topic',
      labelNames: ['topic'],
      registers,
    });
    this.produceRequests = new Counter({
      name: 'tally_relay_produce_requests_total',
      help: 'sendBatch calls Kafka confirmed (one produce request per broker); published / this = records per request',
      registers,
    });
    this.errors = new Counter({
      name: 'tally_relay_errors_total',
      help: 'Failed relay steps by stage (provision|groups|read|produce|ack|claim|denials); each is retried',
      labelNames: ['stage'],
      registers,
    });
    this.reclaimed = new Counter({
      name: 'tally_relay_reclaimed_total',
      help: 'Entries taken over from relays that left them pending past the min idle time',
      registers,
    });
    this.deadLettered = new Counter({
      name: 'tally_relay_dead_lettered_total',
      help: 'Outbox entries or denial fields that could not become events, sent to the dead-letter topic',
      registers,
    });
    this.denials = new Counter({
      name: 'tally_relay_denials_drained_total',
      help: 'Denials published in coalesced decision events (the sum of their counts)',
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'tally_relay_batch_duration_seconds',
      help: 'Time from a batch read to its acknowledgement (produce and ack)',
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    const gauge = (name: string, help: string, pick: (s: OutboxStats) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          try {
            this.set(pick(await stats()));
          } catch {
            // Redis down: report NaN (unknown) rather than a reassuring 0.
            this.set(NaN);
          }
        },
      });
    };
    gauge('tally_outbox_length', 'Entries in all outbox streams (XLEN summed over shards)', (s) => s.length);
    gauge(
      'tally_outbox_oldest_age_seconds',
      'Age of the oldest outbox entry against the Redis clock (0 when empty)',
      (s) => s.oldestAgeMs / 1000,
    );
    gauge('tally_outbox_pending', 'Entries delivered to a relay and not yet acknowledged', (s) => s.pending);
  }
}
