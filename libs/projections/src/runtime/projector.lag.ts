import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { KAFKA_ADMIN, type KafkaAdminPort } from '@tally/ledger';
import type { ComponentHealth } from '@tally/observability';
import { offsetField } from '../sink/projection-keys';
import { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { PROJECTOR_OPTIONS } from '../projections.constants';
import { ProjectorMetrics } from './projector.metrics';
import { foldedTopics, type ResolvedProjectorOptions } from './projector.options';
import { ProjectorPositions } from './projector.positions';

/**
 * Lag per partition, measured every few seconds against the offsets stored with the projection (what
 * the projector resumes from), not Kafka's commits (which may trail them). The same poll is the
 * Kafka health probe: no successful poll for three periods means the broker is unreachable.
 */
@Injectable()
export class ProjectorLag implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private timer?: NodeJS.Timeout;
  private lastSuccess = 0;
  private lastError = 'not measured yet';
  private failures = 0;

  constructor(
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    @Inject(KAFKA_ADMIN) private readonly admin: KafkaAdminPort,
    private readonly namespaces: ProjectionNamespaces,
    private readonly positions: ProjectorPositions,
    private readonly metrics: ProjectorMetrics,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.consume) return;
    const tick = (): void => {
      void this.measure().finally(() => {
        this.timer = setTimeout(tick, this.options.lagPollMs);
        this.timer.unref();
      });
    };
    tick();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  health(): ComponentHealth {
    const age = Date.now() - this.lastSuccess;
    if (age <= 3 * this.options.lagPollMs + 1_000) return { status: 'up', detail: 'brokers answer' };
    return { status: 'down', detail: this.lastError };
  }

  async measure(): Promise<void> {
    try {
      const namespace = this.positions.activeNamespace || (await this.namespaces.active());
      const stored =
        namespace === null ? new Map<string, string>() : await this.namespaces.offsets(namespace);
      for (const topic of foldedTopics(this.options.topics)) {
        for (const w of await this.admin.fetchTopicOffsets(topic)) {
          // Below `low`, retention already deleted the records: they can no longer be waiting.
          const resume = BigInt(stored.get(offsetField(topic, w.partition)) ?? w.low);
          const from = resume > BigInt(w.low) ? resume : BigInt(w.low);
          const lag = BigInt(w.high) > from ? Number(BigInt(w.high) - from) : 0;
          this.metrics.lag.set({ topic, partition: String(w.partition) }, lag);
        }
      }
      this.lastSuccess = Date.now();
      this.failures = 0;
    } catch (error) {
      this.lastError = String(error);
      if (this.failures++ % 12 === 0) this.logger.warn(`lag measurement failed: ${this.lastError}`);
    }
  }
}
