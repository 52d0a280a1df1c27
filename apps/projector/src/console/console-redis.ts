import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';

/**
 * The console's own Redis connection (`tally consumers status` reads the projector's stored offsets
 * there), opened on the first Ledger page: a projector whose console nobody opens holds none.
 */
@Injectable()
export class ConsoleRedis implements OnApplicationShutdown {
  private client?: RedisClient;

  constructor(@Inject(CONSOLE_OPTIONS) private readonly options: ConsoleOptions) {}

  get(): RedisClient {
    this.client ??= createRedisClient(this.options.redis, 'command', 'tally-console');
    return this.client;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}
