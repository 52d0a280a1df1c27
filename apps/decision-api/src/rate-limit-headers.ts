import { type Decision } from '@tally/engine';

/**
 * The headers a caller can relay to its own clients:
 * - `RateLimit-Name/-Limit/-Remaining/-Reset` of the binding window (the denying one, else the
 *   enforced window with the least left); Reset in whole seconds, rounded up;
 * - the IETF draft pair (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` lists every
 *   enforced window as `"<policy>.<window>";q=<limit>`, `RateLimit` carries the binding window's
 *   `r` (remaining) and `t` (seconds to reset);
 * - `Retry-After` in whole seconds, at least 1, on 429 and 503.
 * Shadow policies never show: they do not limit the caller.
 */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {};
  const binding = decision.binding;
  if (binding) {
    const resetSeconds = Math.ceil(binding.reset_ms / 1000);
    headers['ratelimit-name'] = binding.policy;
    headers['ratelimit-limit'] = String(binding.limit);
    headers['ratelimit-remaining'] = String(binding.remaining);
    headers['ratelimit-reset'] = String(resetSeconds);
    headers['ratelimit'] = `"${binding.policy}.${binding.window}";r=${binding.remaining};t=${resetSeconds}`;
  }
  const enforced = decision.policies
    .filter((p) => p.mode === 'enforce')
    .flatMap((p) => p.windows.map((w) => `"${p.name}.${w.name}";q=${w.limit}`));
  if (enforced.length > 0) headers['ratelimit-policy'] = enforced.join(', ');
  if (decision.status === 429 || decision.status === 503) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(decision.retry_after_ms / 1000)));
  }
  return headers;
}

/** The response body: the decision without the transport-only fields. */
export function decisionBody(decision: Decision): Omit<Decision, 'status' | 'binding'> {
  const { status: _status, binding: _binding, ...body } = decision;
  return body;
}
