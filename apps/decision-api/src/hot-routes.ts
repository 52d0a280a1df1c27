import { Logger } from '@nestjs/common';
import { rateLimitHeaders, type BatchRefusedItem, type DecisionBody, type Wire } from '@tally/api-contract';
import { type Decision, type DecisionRequest, type DecisionService } from '@tally/engine';
import { accessConfig, ForbiddenError, GRANT_KEY, type TokenGrant } from '@tally/auth';
import { ApiError, type ErrorBody, type FieldError, logProblem, problemOf, sendProblem } from '@tally/errors';
import { HTTP_STATUS_OF } from '@tally/http';
import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type Tracing } from '@tally/observability';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './decision-body';
import { traceDecisions } from './decision-span';

export interface HotRouteDeps {
  readonly decisions: DecisionService;
  readonly tracing: Tracing;
}

const logger = new Logger('http');
const DECIDERS = { config: accessConfig('decide', { perTenant: true }) };

/**
 * `POST /v1/decisions` and `POST /v1/decisions:batch` as plain Fastify routes: transport →
 * DecisionService → status, headers, body, with nothing of Nest's per-request pipeline in between.
 * What the Nest route did is done here with the same outcomes: the token and its `decide` role,
 * overload shedding and the JSON parser are hooks of the instance (the route gate authenticates from
 * the headers before the body is read, see `accessConfig`, and leaves the grant on the request); then
 * the body shape (the contract's JSON Schema, see decision-body.ts), the token's tenant scope against
 * `selectors.tenant`, the decision; every error leaves through `problemOf`, the mapping of the global
 * `ProblemFilter`.
 */
export function registerHotRoutes(fastify: FastifyInstance, deps: HotRouteDeps): void {
  fastify.post('/v1/decisions', DECIDERS, async (request, reply) => {
    const grant = grantOf(request);
    const checked = checkDecisionBody(request.body);
    if (!checked.ok) return fail(reply, invalidRequest(checked.errors));
    const outOfScope = grant.tenantRefusal(tenantOf(checked.value));
    if (outOfScope) return fail(reply, outOfScope);
    const body = checked.value;
    const decision = deps.tracing.enabled
      ? await traceDecisions(deps.tracing, httpCall(request, tenantOf(body)), (tp) =>
          deps.decisions.decide(body, tp),
        )
      : await deps.decisions.decide(body);
    return reply
      .status(HTTP_STATUS_OF[decision.kind])
      .headers(rateLimitHeaders(decision))
      .send(decisionBody(decision));
  });

  // Independent decisions in one round trip (`::` escapes the literal colon in Fastify's route syntax).
  // The call is 200 and each result carries its own status; an item that is not a valid request is
  // answered 400 on its own, an item for a tenant outside the token's list 403 on its own, and the
  // others are decided (the items are independent decisions, as the batch has always promised).
  fastify.post('/v1/decisions::batch', DECIDERS, async (request, reply) => {
    const grant = grantOf(request);
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
    if (forbidden) logForbidden(forbidden, request.id);
    const valid = judged.filter((j): j is DecisionRequest => !isRefused(j));
    const decisions =
      valid.length === 0
        ? []
        : deps.tracing.enabled
          ? await traceDecisions(deps.tracing, httpCall(request, undefined), (tp) =>
              deps.decisions.decideBatch(valid, tp),
            )
          : await deps.decisions.decideBatch(valid);
    let next = 0;
    const results = judged.map((j) => {
      if (isRefused(j)) return j;
      const d = decisions[next++];
      return { status: HTTP_STATUS_OF[d.kind], ...decisionBody(d) };
    });
    return reply.status(200).send({ results });
  });
}

/** What a decision span records of an HTTP call (tracing on only). */
function httpCall(request: FastifyRequest, tenant: unknown) {
  return {
    transport: 'http',
    traceparent: request.headers.traceparent,
    requestId: request.id,
    tenant,
  } as const;
}

/** The grant the route gate left on the request: the gate runs before every hot route. */
function grantOf(request: FastifyRequest): TokenGrant {
  const grant = (request as FastifyRequest & { [GRANT_KEY]?: TokenGrant })[GRANT_KEY];
  if (grant === undefined) throw new Error('no grant on a hot route: is the route gate installed?');
  return grant;
}

/** The checked body's `selectors` is an object (decision-body.ts): its `tenant`, as sent. */
function tenantOf(request: DecisionRequest): unknown {
  return (request.selectors as Record<string, unknown>).tenant;
}

/** A batch item answered without deciding it: its own 400 or 403 result (the contract's shape). */
type RefusedItem = Wire<BatchRefusedItem>;

function isRefused(item: DecisionRequest | RefusedItem): item is RefusedItem {
  return 'status' in item;
}

function fail(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof ForbiddenError) logForbidden(error, reply.request.id);
  const problem = problemOf(error);
  logProblem(logger, error, problem, reply.request.id);
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

/** A known token refused: its owner is known by name (as the route gate logs it). */
function logForbidden(error: ForbiddenError, requestId: string): void {
  logger.warn(
    `auth.forbidden: token ${error.tokenName} on the decision API: ${error.message} (request ${requestId})`,
  );
}

/** The response body: the decision without what only the transport reads (`kind`, `binding`). */
function decisionBody(decision: Decision): DecisionBody {
  const { kind: _kind, binding: _binding, ...body } = decision;
  return body as DecisionBody;
}
