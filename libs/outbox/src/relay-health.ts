import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { KAFKA_ADMIN, type KafkaAdminPort } from '@tally/ledger';
import { HealthRegistry, type ComponentHealth } from '@tally/observability';
import { KafkaPublisher } from './kafka-publisher';
import { RELAY_REDIS } from './outbox.constants';
import type { RelayRedis } from './relay-redis';

/** A batch confirmed this recently proves Kafka is up without asking it. */
const RECENT_SUCCESS_MS = 10_000;

/** Registers the relay's readiness components: `redis` and `kafka`. */
@Injectable()
export class RelayHealth implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    @Inject(RELAY_REDIS) private readonly redis: RelayRedis,
    @Inject(KAFKA_ADMIN) private readonly admin: KafkaAdminPort,
    private readonly publisher: KafkaPublisher,
  ) {}

  onModuleInit(): void {
    this.health.register('redis', () => this.redisHealth());
    this.health.register('kafka', () => this.kafkaHealth());
  }

  private async redisHealth(): Promise<ComponentHealth> {
    await this.redis.commands.ping();
    return { status: 'up' };
  }

  /** Down while produces fail (the outbox is growing); else a recent success or a metadata call. */
  private async kafkaHealth(): Promise<ComponentHealth> {
    const failure = this.publisher.lastFailure;
    if (failure !== undefined) return { status: 'down', detail: `produce failing: ${failure}` };
    if (this.publisher.sinceLastSuccessMs < RECENT_SUCCESS_MS) return { status: 'up' };
    const cluster = await this.admin.describeCluster();
    return { status: 'up', detail: `${cluster.brokers.length} broker(s)` };
  }
}
