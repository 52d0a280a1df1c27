import { Body, Controller, Get, Headers, HttpCode, Inject, Post } from '@nestjs/common';
import { SimulateRequestSchema, type SimulateRequest } from '@tally/api-contract';
import { ApiError } from '@tally/errors';
import { QuerySchemaPipe } from '@tally/http';
import { RequireAccess } from '@tally/auth';
import { LEDGER, type Ledger } from '@tally/ledger';
import { simulate } from '@tally/ops';
import { compilePolicyFile } from '@tally/policy';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';
import { upstreamGet } from './upstream.client';

const SIMULATE_BODY = new QuerySchemaPipe(SimulateRequestSchema);
/** A simulation holds the range's decisions in memory (sorted by time): a day bounds what one call costs. */
const MAX_RANGE_MS = 86_400_000;
const DECISION_API = 'TALLY_CONSOLE_DECISION_API_URL';

/**
 * The Policies page: the running set and its recent reloads (the decision API's, fetched with the
 * caller's own token, so the decision API judges it), and a proposed file validated exactly as a reload
 * would be and replayed over recorded decisions (`tally simulate`) before any rollout. Admin role.
 */
@Controller('v1')
@RequireAccess('admin')
export class PolicyPreviewController {
  constructor(
    @Inject(LEDGER) private readonly ledger: Ledger,
    @Inject(CONSOLE_OPTIONS) private readonly options: ConsoleOptions,
  ) {}

  @Post('policies::simulate')
  @HttpCode(200)
  async simulate(@Body(SIMULATE_BODY) body: SimulateRequest) {
    const [fromMs, toMs] = [Date.parse(body.from), Date.parse(body.to)];
    if (Number.isNaN(fromMs))
      throw new ApiError(400, 'request.invalid', 'the request is invalid', [
        { path: 'from', message: 'must be an ISO 8601 time' },
      ]);
    if (!(fromMs < toMs) || toMs - fromMs > MAX_RANGE_MS)
      throw new ApiError(400, 'request.invalid', 'the request is invalid', [
        { path: 'to', message: 'must be an ISO 8601 time after `from`, at most 24 h later' },
      ]);
    const compiled = compilePolicyFile(body.policies);
    if (!compiled.ok)
      throw new ApiError(
        422,
        'simulate.policy_invalid',
        'the proposed policy file is invalid',
        compiled.errors.map((e) => ({ path: e.path, message: e.message })),
      );
    return simulate(this.ledger, {
      policySet: compiled.set,
      fromMs,
      toMs,
      ...(body.tenant === undefined ? {} : { tenant: body.tenant }),
    });
  }

  @Get('decision-api/policies')
  policies(@Headers('authorization') authorization?: string): Promise<unknown> {
    return this.forward('/v1/policies', authorization);
  }

  @Get('decision-api/policy-reloads')
  reloads(@Headers('authorization') authorization?: string): Promise<unknown> {
    return this.forward('/v1/policy-reloads', authorization);
  }

  /** The decision API's answer as it is: its refusals (401/403) keep their code. */
  private async forward(path: string, authorization?: string): Promise<unknown> {
    const res = await upstreamGet(this.options.decisionApiUrl, DECISION_API, path, authorization);
    const body = res.json() as { code?: string; message?: string };
    if (res.status === 200) return body;
    if (res.status === 401 || res.status === 403)
      throw new ApiError(
        res.status,
        res.status === 401 ? 'auth.invalid' : 'auth.forbidden',
        body.message ?? '',
      );
    throw new ApiError(502, 'upstream.unreachable', `${DECISION_API}: ${res.status} ${body.code ?? ''}`);
  }
}
