import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { DecisionService } from '@tally/engine';
import { RequireAccess } from '@tally/http';
import { type FastifyReply } from 'fastify';
import { BatchRequestDto, DecisionRequestDto } from './decision.dto';
import { decisionBody, rateLimitHeaders } from './rate-limit-headers';

/** The hot path: transport → DecisionService → status, headers, body. */
@Controller('v1')
@RequireAccess('caller')
export class DecisionsController {
  constructor(private readonly decisions: DecisionService) {}

  @Post('decisions')
  async decide(
    @Body() body: DecisionRequestDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const decision = await this.decisions.decide({ ...body, cost: body.cost ?? 1 });
    void reply.status(decision.status).headers(rateLimitHeaders(decision));
    return decisionBody(decision);
  }

  /** Independent decisions in one round trip; the call is 200 and each result carries its own status. */
  @Post('decisions::batch')
  @HttpCode(200)
  async batch(@Body() body: BatchRequestDto): Promise<unknown> {
    const decisions = await this.decisions.decideBatch(
      body.requests.map((r) => ({ ...r, cost: r.cost ?? 1 })),
    );
    return { results: decisions.map((d) => ({ status: d.status, ...decisionBody(d) })) };
  }
}
