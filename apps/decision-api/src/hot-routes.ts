import { Logger } from '@nestjs/common';
import { type DecisionRequest, type DecisionService } from '@tally/engine';
import {
  ApiError,
  ForbiddenError,
  logProblem,
  problemOf,
  sendProblem,
  type BearerTokens,
  type ErrorBody,
  type FieldError,
} from '@tally/http';
import { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './hot-body';
import { decisionBody, rateLimitHeaders } from './rate-limit-headers';

export interface HotRouteDeps {
  readonly decisions: DecisionService;
  readonly tokens: BearerTokens;
}

const logger = new Logger('http');

/**
 * `POST /v1/decisions` and `POST /v1/decisions:batch` as plain Fastify routes: transport →
 * DecisionService → status, headers, body, with nothing of Nest's per-request pipeline in between.
 * What the Nest route did is done here in the same order with the same outcomes: the JSON parser and
 * overload shedding are Fastify hooks of the instance (they apply as before); then the token and its
 * `decide` role (as `BearerAuthGuard`), the body shape (as the validation pipe, see hot-body.ts), the
 * token's tenant scope against `selectors.tenant`, the decision; every error leaves through
 * `problemOf`, the mapping of the global `ProblemFilter`.
 */
export function registerHotRoutes(fastify: FastifyInstance, deps: HotRouteDeps): void {
  const errorHandler = (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    fail(reply, error);
  };

  fastify.post('/v1/decisions', { errorHandler }, async (request, reply) => {
    const grant = deps.tokens.authorize(request.headers.authorization, 'decide');
    if (grant instanceof ApiError) return fail(reply, grant);
    const checked = checkDecisionBody(request.body);
    if (!checked.ok) return fail(reply, invalidRequest(checked.errors));
    const outOfScope = grant.tenantRefusal(tenantOf(checked.value));
    if (outOfScope) return fail(reply, outOfScope);
    const decision = await deps.decisions.decide(checked.value);
    return reply.status(decision.status).headers(rateLimitHeaders(decision)).send(decisionBody(decision));
  });

  // Independent decisions in one round trip (`::` escapes the literal colon in Fastify's route syntax).
  // The call is 200 and each result carries its own status; an item that is not a valid request is
  // answered 400 on its own, an item for a tenant outside the token's list 403 on its own, and the
  // others are decided (the items are independent decisions, as the batch has always promised).
  fastify.post('/v1/decisions::batch', { errorHandler }, async (request, reply) => {
    const grant = deps.tokens.authorize(request.headers.authorization, 'decide');
    if (grant instanceof ApiError) return fail(reply, grant);
    const envelope = checkBatchBody(request.body);
    if (!envelope.ok) return fail(reply, invalidRequest(envelope.errors));
    let forbidden: ForbiddenError | undefined;
    const judged = envelope.value.requests.map((item, i): DecisionRequest | RefusedItem => {
      const c = checkDecisionItem(item, `requests[${i}]`);
      if (!c.ok) return invalidItem(c.errors);
      const outOfScope = grant.tenantRefusal(tenantOf(c.value));
      if (!outOfScope) return c.value;
      forbidden = outOfScope;
      return forbiddenItem(outOfScope);
    });
    // One line per call, not per item: a batch of a thousand refused items is one misconfiguration.
    if (forbidden) logForbidden(forbidden);
    const valid = judged.filter((j): j is DecisionRequest => !isRefused(j));
    const decisions = valid.length === 0 ? [] : await deps.decisions.decideBatch(valid);
    let next = 0;
    const results = judged.map((j) => {
      if (isRefused(j)) return j;
      const d = decisions[next++];
      return { status: d.status, ...decisionBody(d) };
    });
    return reply.status(200).send({ results });
  });
}

/** The checked body's `selectors` is an object (hot-body.ts): its `tenant`, as sent. */
function tenantOf(request: DecisionRequest): unknown {
  return (request.selectors as Record<string, unknown>).tenant;
}

/** A batch item answered without deciding it: its own 400 or 403 result. */
type RefusedItem = ErrorBody & { status: 400 | 403; allowed: false };

function isRefused(item: DecisionRequest | RefusedItem): item is RefusedItem {
  return 'status' in item;
}

function fail(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof ForbiddenError) logForbidden(error);
  const problem = problemOf(error);
  logProblem(logger, error, problem);
  sendProblem(reply, problem);
  return reply;
}

function invalidRequest(errors: readonly FieldError[]): ApiError {
  return new ApiError(400, 'request.invalid', 'the request is invalid', errors);
}

function invalidItem(errors: ErrorBody['errors']): RefusedItem {
  return { status: 400, allowed: false, code: 'request.invalid', message: 'the request is invalid', errors };
}

function forbiddenItem(error: ForbiddenError): RefusedItem {
  return { status: 403, allowed: false, code: 'auth.forbidden', message: error.message };
}

/** A known token refused: its owner is known by name (see BearerAuthGuard). */
function logForbidden(error: ForbiddenError): void {
  logger.warn(`auth.forbidden: token ${error.tokenName} on the decision API: ${error.message}`);
}
