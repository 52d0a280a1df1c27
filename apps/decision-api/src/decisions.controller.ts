import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { DecisionService, type DecisionRequest } from '@tally/engine';
import { RequireAccess, validateAs, type ErrorBody } from '@tally/http';
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
    const decision = await this.decisions.decide(toRequest(body));
    void reply.status(decision.status).headers(rateLimitHeaders(decision));
    return decisionBody(decision);
  }

  /**
   * Independent decisions in one round trip (the `::` escapes the literal colon of
   * `/v1/decisions:batch` in Nest's route syntax). The call is 200 and each result carries its own
   * status; an item that is not a valid request is answered 400 on its own and the others are decided.
   */
  @Post('decisions::batch')
  @HttpCode(200)
  async batch(@Body() body: BatchRequestDto): Promise<unknown> {
    const checked = body.requests.map((item, i) => validateAs(DecisionRequestDto, item, `requests[${i}]`));
    const valid: DecisionRequest[] = [];
    for (const c of checked) if (c.ok) valid.push(toRequest(c.value));
    const decisions = valid.length === 0 ? [] : await this.decisions.decideBatch(valid);
    let next = 0;
    const results = checked.map((c) => {
      if (!c.ok) return invalidItem(c.errors);
      const d = decisions[next++];
      return { status: d.status, ...decisionBody(d) };
    });
    return { results };
  }
}

function toRequest(body: DecisionRequestDto): DecisionRequest {
  return { ...body, cost: body.cost ?? 1 };
}

function invalidItem(errors: ErrorBody['errors']): ErrorBody & { status: 400; allowed: false } {
  return { status: 400, allowed: false, code: 'request.invalid', message: 'the request is invalid', errors };
}
