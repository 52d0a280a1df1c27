import { Inject, Injectable } from '@nestjs/common';
import { LEDGER_PRODUCER, type LedgerProducer, type TopicMessages } from '@tally/ledger';
import { chunkTopicMessages } from './outbox-batch';
import { RELAY_OPTIONS } from './outbox.constants';
import { RelayLifecycle } from './relay-lifecycle';
import { RelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';

/** Sends batches with the idempotent producer (acks=all), retrying through Kafka outages. */
@Injectable()
export class KafkaPublisher {
  private failure?: string;
  private lastSuccess = -Infinity;

  constructor(
    @Inject(LEDGER_PRODUCER) private readonly producer: LedgerProducer,
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
    private readonly lifecycle: RelayLifecycle,
    private readonly metrics: RelayMetrics,
  ) {}

  /**
   * Never called while another call is in flight (see KafkajsLedgerProducer: a second concurrent
   * sendBatch would only queue behind the first, and could overtake it on a retry).
   * Resolves `true` once Kafka confirmed every message; `false` only when shutting down before that.
   * A Kafka outage keeps it retrying (the caller holds its entries unacknowledged meanwhile, so the
   * outbox grows instead of losing anything).
   */
  async publish(topicMessages: readonly TopicMessages[]): Promise<boolean> {
    for (const chunk of chunkTopicMessages(topicMessages, this.options.maxBatchBytes)) {
      const sent = await this.lifecycle.retry(
        'produce',
        () => this.producer.sendBatch(chunk, { compression: this.options.compression }),
        (error) => (this.failure = error.message),
      );
      if (!sent) return false;
      this.failure = undefined;
      this.lastSuccess = performance.now();
      this.metrics.produceRequests.inc();
      for (const { topic, messages } of chunk) this.metrics.published.inc({ topic }, messages.length);
    }
    return true;
  }

  /** The last produce error while it is still unresolved (Kafka down), else undefined. */
  get lastFailure(): string | undefined {
    return this.failure;
  }

  /** Milliseconds since Kafka last confirmed a batch (Infinity if never). */
  get sinceLastSuccessMs(): number {
    return performance.now() - this.lastSuccess;
  }
}
