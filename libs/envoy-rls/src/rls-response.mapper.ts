import { rateLimitHeaders, type DecisionKind } from '@tally/api-contract';
import { type Decision, type DecisionBinding } from '@tally/engine';
import { type WindowSpec } from '@tally/policy';
import { rateLimitUnitOf } from './rate-limit-unit';
import {
  type RlsDescriptorStatus,
  type RlsDuration,
  type RlsHeaderValue,
  type RlsResponse,
} from './rls.types';

/** uint32 on the wire. */
const MAX_UINT32 = 0xffff_ffff;
const POLICY_HEADER = 'ratelimit-policy';

export interface RlsResponseContext {
  /** The window spec in force for a binding window (its period picks the Envoy unit), if still known. */
  readonly windowOf: (
    policy: string,
    window: string,
  ) => Pick<WindowSpec, 'algorithm' | 'periodMs'> | undefined;
  /** Add envoyproxy/ratelimit's `x-ratelimit-*` headers too (`TALLY_GRPC_X_RATELIMIT_HEADERS`). */
  readonly xRateLimitHeaders?: boolean;
}

/** envoyproxy/ratelimit's response headers (its defaults' names), with the numbers of Tally's own. */
const X_RATELIMIT_OF = {
  'ratelimit-limit': 'x-ratelimit-limit',
  'ratelimit-remaining': 'x-ratelimit-remaining',
  'ratelimit-reset': 'x-ratelimit-reset',
} as const;

/**
 * The one table from a decision's kind to what it means on this transport: `invalid` fails the call
 * (INVALID_ARGUMENT), `unavailable` too unless a descriptor was denied (UNAVAILABLE), the others are
 * a descriptor status.
 */
const RLS_VERDICT_OF = {
  allowed: 'OK',
  denied: 'OVER_LIMIT',
  invalid: 'INVALID',
  too_large: 'INVALID',
  conflict: 'INVALID',
  unavailable: 'UNKNOWN',
} as const satisfies Record<DecisionKind, RlsDescriptorStatus['code'] | 'INVALID'>;

/**
 * What the gRPC call answers, decided in this order:
 * 1. `invalid` — any descriptor refused as bad input (400/409/413): the request itself is wrong, so
 *    the caller gets INVALID_ARGUMENT with the decision code rather than a limit verdict;
 * 2. `answer` OVER_LIMIT — any descriptor denied by quota (429), even if another hit a backend
 *    failure: a known denial must not turn into Envoy's failure mode, which may be "allow";
 * 3. `unavailable` — a descriptor refused under fail_closed (503): a gRPC error, so Envoy's own
 *    `failure_mode_deny` decides, as for any unreachable rate-limit service;
 * 4. `answer` OK — everything allowed, including fail_open degraded decisions and shadow would-denies.
 */
export type RlsOutcome =
  | { readonly kind: 'answer'; readonly response: RlsResponse }
  | { readonly kind: 'invalid'; readonly message: string }
  | { readonly kind: 'unavailable'; readonly message: string };

/**
 * Maps the decisions of a request's descriptors (request order) to the RLS answer; `null` stands for
 * a descriptor no rule can fit, which was not decided (OK, no limit).
 */
export function toRlsOutcome(slots: readonly (Decision | null)[], context: RlsResponseContext): RlsOutcome {
  const decisions = slots.map((d) => d ?? RULELESS);
  const verdicts = decisions.map((d) => RLS_VERDICT_OF[d.kind]);
  const invalidAt = verdicts.indexOf('INVALID');
  if (invalidAt >= 0) return { kind: 'invalid', message: describe(decisions[invalidAt], invalidAt) };
  const deniedAt = verdicts.indexOf('OVER_LIMIT');
  const failedAt = verdicts.indexOf('UNKNOWN');
  if (deniedAt < 0 && failedAt >= 0)
    return { kind: 'unavailable', message: describe(decisions[failedAt], failedAt) };
  return {
    kind: 'answer',
    response: {
      overall_code: deniedAt >= 0 ? 'OVER_LIMIT' : 'OK',
      statuses: decisions.map((d) => descriptorStatus(d, context)),
      response_headers_to_add: responseHeaders(decisions, deniedAt, context.xRateLimitHeaders === true),
    },
  };
}

/** What a descriptor no rule fits amounts to: allowed, no policy, nothing binding. */
const RULELESS: Decision = {
  allowed: true,
  decision_id: '',
  reason: null,
  code: null,
  retry_after_ms: 0,
  degraded: false,
  replayed: false,
  policies: [],
  kind: 'allowed',
  binding: null,
};

function describe(decision: Decision, index: number): string {
  const detail = decision.message ?? decision.reason ?? '';
  return `descriptors[${index}]: ${decision.code ?? decision.kind}${detail ? `: ${detail}` : ''}`;
}

/** A descriptor whose backend failed beside a denied one reads UNKNOWN: it was neither OK nor over. */
function descriptorStatus(decision: Decision, context: RlsResponseContext): RlsDescriptorStatus {
  const verdict = RLS_VERDICT_OF[decision.kind];
  const code = verdict === 'INVALID' ? 'OK' : verdict;
  const binding = decision.binding ?? shadowBinding(decision);
  if (!binding) return { code, limit_remaining: 0 };
  const window = context.windowOf(binding.policy, binding.window);
  const unit = window ? rateLimitUnitOf(window) : undefined;
  const limit_remaining = Math.min(binding.remaining, MAX_UINT32);
  const duration_until_reset = duration(binding.reset_ms);
  if (!unit) return { code, limit_remaining, duration_until_reset };
  const name = `${binding.policy}.${binding.window}`;
  const current_limit = { name, requests_per_unit: Math.min(binding.limit, MAX_UINT32), unit };
  return { code, current_limit, limit_remaining, duration_until_reset };
}

/**
 * A descriptor counted by shadow policies only reports their window with the least left (its code
 * stays OK: shadow never denies), as envoyproxy/ratelimit's `shadow_mode` still reports its limit.
 * The headers keep the HTTP API's rule (enforced windows only).
 */
function shadowBinding(decision: Decision): DecisionBinding | null {
  let best: DecisionBinding | null = null;
  for (const policy of decision.policies) {
    if (policy.mode !== 'shadow') continue;
    for (const w of policy.windows)
      if (best === null || w.remaining < best.remaining)
        best = {
          policy: policy.name,
          window: w.name,
          limit: w.limit,
          remaining: w.remaining,
          reset_ms: w.reset_ms,
        };
  }
  return best;
}

function duration(ms: number): RlsDuration {
  const whole = Math.max(0, Math.round(ms));
  return { seconds: Math.floor(whole / 1000), nanos: (whole % 1000) * 1_000_000 };
}

/**
 * Envoy adds these to the response it relays (or to its own 429). One set of numbers can describe
 * one window only: the denying descriptor's, else the descriptor whose binding window has the least
 * left (the first on a tie). `RateLimit-Policy` lists the enforced windows of every descriptor.
 * With `peer`, the limit, remaining and reset are repeated under envoyproxy/ratelimit's names
 * (plain numbers there too: the limit, the units left, seconds to the reset).
 */
function responseHeaders(decisions: readonly Decision[], deniedAt: number, peer: boolean): RlsHeaderValue[] {
  const chosen = deniedAt >= 0 ? decisions[deniedAt] : tightest(decisions);
  if (!chosen) return [];
  // Each decision's headers once; with one descriptor (Envoy's usual call) its own list is the list.
  const own = decisions.map(rateLimitHeaders);
  const headers: Record<string, string | undefined> = own[decisions.indexOf(chosen)];
  if (peer)
    for (const [mine, theirs] of Object.entries(X_RATELIMIT_OF))
      if (headers[mine] !== undefined) headers[theirs] = headers[mine];
  if (own.length > 1) {
    const policies = new Set<string>();
    for (const h of own) {
      const listed = h[POLICY_HEADER];
      if (listed) for (const item of listed.split(', ')) policies.add(item);
    }
    if (policies.size > 0) headers[POLICY_HEADER] = [...policies].join(', ');
  }
  const out: RlsHeaderValue[] = [];
  for (const key in headers) {
    const value = headers[key];
    if (value !== undefined) out.push({ key, value });
  }
  return out;
}

function tightest(decisions: readonly Decision[]): Decision | undefined {
  let best: Decision | undefined;
  for (const d of decisions) {
    if (!d.binding) continue;
    if (!best?.binding || d.binding.remaining < best.binding.remaining) best = d;
  }
  return best ?? decisions[0];
}
