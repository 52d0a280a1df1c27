import { RequireAccess } from '@tally/http';
import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { HealthRegistry, type ReadinessReport } from './health.registry';

/** Liveness and readiness, the same shape in every app. */
@Controller()
@RequireAccess('public')
export class HealthController {
  constructor(private readonly health: HealthRegistry) {}

  /** Liveness: the process answers. Never touches a dependency (a slow Redis must not get us killed). */
  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: 200 when healthy or degraded (still serving), 503 when unavailable. */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessReport> {
    const report = await this.health.report();
    void reply.status(report.status === 'unavailable' ? 503 : 200);
    return report;
  }
}
