import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { NamespaceSwitchSchema, type NamespaceSwitch } from '@tally/api-contract';
import { KAFKA_ADMIN, LEDGER, type KafkaAdminPort, type Ledger } from '@tally/ledger';
import { ApiError } from '@tally/errors';
import { QuerySchemaPipe } from '@tally/http';
import { RequireAccess } from '@tally/auth';
import { consumersStatus, PROJECTOR_GROUP, PROJECTOR_TOPICS, recentDeadLetters } from '@tally/ops';
import { NamespaceRefusedError, ProjectionNamespaces } from '@tally/projections';
import { ConsoleSampler } from './console-sampler';
import { ConsoleRedis } from './console-redis';

const SWITCH_BODY = new QuerySchemaPipe(NamespaceSwitchSchema);
/** Dead letters shown: the newest ones; the rest stay on the topic for `kafka-console-consumer`. */
const DEAD_LETTERS = 50;

/**
 * The Ledger and consumers page and the Namespaces page: the admin role, every tenant (they are about
 * the whole pipeline). Each call is what the CLI's `consumers status` and `projections list|switch`
 * do, through the same functions.
 */
@Controller('v1')
@RequireAccess('admin')
export class PipelineController {
  constructor(
    private readonly sampler: ConsoleSampler,
    private readonly namespaces: ProjectionNamespaces,
    @Inject(KAFKA_ADMIN) private readonly admin: KafkaAdminPort,
    @Inject(LEDGER) private readonly ledger: Ledger,
    private readonly redis: ConsoleRedis,
  ) {}

  @Get('pipeline')
  async pipeline() {
    const [consumers, deadLetters] = await Promise.all([
      consumersStatus({ admin: this.admin, redis: this.redis.get() }, PROJECTOR_GROUP, PROJECTOR_TOPICS),
      recentDeadLetters(this.ledger, DEAD_LETTERS),
    ]);
    return { outbox: this.sampler.outbox(), consumers, dead_letters: deadLetters };
  }

  @Get('namespaces')
  async list() {
    return { namespaces: await this.namespaces.list() };
  }

  /** Points queries and the projector at another namespace; `confirm` must repeat the name. */
  @Post('namespaces::switch')
  @HttpCode(200)
  async switchTo(@Body(SWITCH_BODY) body: NamespaceSwitch) {
    if (body.confirm !== body.name)
      throw new ApiError(400, 'request.invalid', 'the request is invalid', [
        { path: 'confirm', message: 'must repeat `name` exactly' },
      ]);
    // The name came in the body: never echoed (as the queries' `namespace` parameter).
    if (!(await this.namespaces.exists(body.name)))
      throw new ApiError(
        404,
        'namespace.not_found',
        'the projection namespace given in `name` does not exist',
      );
    try {
      return await this.namespaces.switchTo(body.name, body.force === true);
    } catch (error) {
      if (error instanceof NamespaceRefusedError)
        throw new ApiError(409, 'namespace.switch_refused', error.message);
      throw error;
    }
  }
}
