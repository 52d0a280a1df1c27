import { Logger } from '@nestjs/common';
import { type DecisionRequest, type DecisionService } from '@tally/engine';
import {
  accessConfig,
  ApiError,
  logProblem,
  problemOf,
  sendProblem,
  type ErrorBody,
  type FieldError,
} from '@tally/http';
import { type FastifyInstance, type FastifyReply } from 'fastify';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './hot-body';
import { decisionBody, rateLimitHeaders } from './rate-limit-headers';

export interface HotRouteDeps {
  readonly decisions: DecisionService;
}

const logger = new Logger('http');
const CALLERS = { config: accessConfig('caller') };

/**
 * `POST /v1/decisions` and `POST /v1/decisions:batch` as plain Fastify routes: transport →
 * DecisionService → status, headers, body, with nothing of Nest's per-request pipeline in between.
 * What the Nest route did is done here with the same outcomes: the caller token, overload shedding
 * and the JSON parser are hooks of the instance (the route gate authenticates from the headers
 * before the body is read, see `accessConfig`); then the body shape (as the validation pipe, see
 * hot-body.ts), the decision; every error leaves through `problemOf`, the mapping of the global
 * `ProblemFilter`.
 */
export function registerHotRoutes(fastify: FastifyInstance, deps: HotRouteDeps): void {
  fastify.post('/v1/decisions', CALLERS, async (request, reply) => {
    const checked = checkDecisionBody(request.body);
    if (!checked.ok) return fail(reply, invalidRequest(checked.errors));
    const decision = await deps.decisions.decide(checked.value);
    return reply.status(decision.status).headers(rateLimitHeaders(decision)).send(decisionBody(decision));
  });

  // Independent decisions in one round trip (`::` escapes the literal colon in Fastify's route syntax).
  // The call is 200 and each result carries its own status; an item that is not a valid request is
  // answered 400 on its own and the others are decided.
  fastify.post('/v1/decisions::batch', CALLERS, async (request, reply) => {
    const envelope = checkBatchBody(request.body);
    if (!envelope.ok) return fail(reply, invalidRequest(envelope.errors));
    const checked = envelope.value.requests.map((item, i) => checkDecisionItem(item, `requests[${i}]`));
    const valid: DecisionRequest[] = [];
    for (const c of checked) if (c.ok) valid.push(c.value);
    const decisions = valid.length === 0 ? [] : await deps.decisions.decideBatch(valid);
    let next = 0;
    const results = checked.map((c) => {
      if (!c.ok) return invalidItem(c.errors);
      const d = decisions[next++];
      return { status: d.status, ...decisionBody(d) };
    });
    return reply.status(200).send({ results });
  });
}

function fail(reply: FastifyReply, error: unknown): FastifyReply {
  const problem = problemOf(error);
  logProblem(logger, error, problem);
  sendProblem(reply, problem);
  return reply;
}

function invalidRequest(errors: readonly FieldError[]): ApiError {
  return new ApiError(400, 'request.invalid', 'the request is invalid', errors);
}

function invalidItem(errors: ErrorBody['errors']): ErrorBody & { status: 400; allowed: false } {
  return { status: 400, allowed: false, code: 'request.invalid', message: 'the request is invalid', errors };
}
