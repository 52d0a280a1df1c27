import type { DecisionKind } from './decision-kind';
import type { DecisionPolicy } from './decision-response.schema';

/** The window whose numbers go in the `RateLimit-*` headers. */
export interface RateLimitBinding {
  /** Policy name (`RateLimit-Name`). */
  readonly policy: string;
  /** Window name within the policy. */
  readonly window: string;
  readonly limit: number;
  readonly remaining: number;
  readonly reset_ms: number;
}

/** What the headers are made of: a decision, whichever transport carries it. */
export interface RateLimitSource {
  readonly kind: DecisionKind;
  /** The denying window, else the enforce window with the least left; null when none applies. */
  readonly binding: RateLimitBinding | null;
  readonly policies: readonly DecisionPolicy[];
  readonly retry_after_ms: number;
}

/** Every header a decision may carry, lower-case, with what it says (the OpenAPI document lists them). */
export const RATE_LIMIT_HEADERS = {
  'ratelimit-name': 'The binding policy: the denying one, else the enforced window with the least left.',
  'ratelimit-limit': 'The binding window’s limit (units per period).',
  'ratelimit-remaining': 'Units left in the binding window.',
  'ratelimit-reset': 'Whole seconds (rounded up) until the binding window is back to its full limit.',
  ratelimit: 'IETF draft: `"<policy>.<window>";r=<remaining>;t=<seconds to reset>` of the binding window.',
  'ratelimit-policy':
    'IETF draft: every enforced window as `"<policy>.<window>";q=<limit>`, comma-separated.',
  'retry-after': 'Whole seconds, at least 1, on a quota denial (429) or a backend failure (503).',
} as const;
export type RateLimitHeaderName = keyof typeof RATE_LIMIT_HEADERS;

/**
 * The headers a caller can relay to its own clients, for HTTP answers and Envoy's
 * `response_headers_to_add` alike:
 * - `RateLimit-Name/-Limit/-Remaining/-Reset` of the binding window; Reset in whole seconds, rounded up;
 * - the IETF draft pair (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` lists every
 *   enforced window, `RateLimit` carries the binding window's `r` (remaining) and `t` (seconds to reset);
 * - `Retry-After` in whole seconds, at least 1, when the answer says "come back later".
 * Shadow policies never show: they do not limit the caller.
 */
export function rateLimitHeaders(decision: RateLimitSource): Partial<Record<RateLimitHeaderName, string>> {
  const headers: Partial<Record<RateLimitHeaderName, string>> = {};
  const binding = decision.binding;
  if (binding) {
    const resetSeconds = Math.ceil(binding.reset_ms / 1000);
    headers['ratelimit-name'] = binding.policy;
    headers['ratelimit-limit'] = String(binding.limit);
    headers['ratelimit-remaining'] = String(binding.remaining);
    headers['ratelimit-reset'] = String(resetSeconds);
    headers.ratelimit = `"${binding.policy}.${binding.window}";r=${binding.remaining};t=${resetSeconds}`;
  }
  const enforced = decision.policies
    .filter((p) => p.mode === 'enforce')
    .flatMap((p) => p.windows.map((w) => `"${p.name}.${w.name}";q=${w.limit}`));
  if (enforced.length > 0) headers['ratelimit-policy'] = enforced.join(', ');
  if (decision.kind === 'denied' || decision.kind === 'unavailable') {
    headers['retry-after'] = String(Math.max(1, Math.ceil(decision.retry_after_ms / 1000)));
  }
  return headers;
}
