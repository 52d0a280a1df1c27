import { Inject, Injectable } from '@nestjs/common';
import { METRICS_REGISTRY } from '@tally/observability';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Prometheus series of the projector. Labels are topics and partitions only: bounded cardinality. */
@Injectable()
export class ProjectorMetrics {
  readonly applied: Counter;
  readonly duplicates: Counter;
  readonly deadLettered: Counter<'topic'>;
  readonly dropped: Counter<'reason'>;
  readonly stepFailures: Counter;
  readonly commitErrors: Counter;
  readonly batchSeconds: Histogram;
  readonly lag: Gauge<'topic' | 'partition'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    const registers = [registry];
    this.applied = new Counter({
      name: 'tally_projector_events_applied_total',
      help: 'Events folded into the active projection namespace',
      registers,
    });
    this.duplicates = new Counter({
      name: 'tally_projector_events_duplicate_total',
      help: 'Events skipped as already applied (redelivery, re-publication, rebalance)',
      registers,
    });
    this.deadLettered = new Counter({
      name: 'tally_projector_events_dead_lettered_total',
      help: 'Records sent to the dead-letter topic, by source topic: invalid, or refused by a step (a sum past 2^53 - 1, a corrupt stored value)',
      labelNames: ['topic'],
      registers,
    });
    this.dropped = new Counter({
      name: 'tally_projector_batches_dropped_total',
      help: 'Batches left unapplied because they were fetched before a seek (reason=repositioned)',
      labelNames: ['reason'],
      registers,
    });
    this.stepFailures = new Counter({
      name: 'tally_projector_step_failures_total',
      help: 'Steps that failed with nothing written (Redis down, a namespace-wide key unusable): the projector resumes from its stored offsets',
      registers,
    });
    this.commitErrors = new Counter({
      name: 'tally_projector_kafka_commit_errors_total',
      help: 'Failed Kafka offset commits (visibility only: Redis holds the offsets the projector resumes from)',
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'tally_projector_batch_apply_seconds',
      help: 'Time to validate, dead-letter and fold one batch into the step writer (waits for Redis steps included)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.lag = new Gauge({
      name: 'tally_projector_lag_events',
      help: 'Records not yet applied per partition: high watermark minus the offset stored with the projection',
      labelNames: ['topic', 'partition'],
      registers,
    });
  }
}
