import { describe, expect, it } from 'vitest';
import type { DecisionKind } from './decision-kind';
import { rateLimitHeaders, type RateLimitSource } from './rate-limit-headers';

const source = (kind: DecisionKind, extra: Partial<RateLimitSource> = {}): RateLimitSource => ({
  kind,
  binding: { policy: 'api', window: 'minute', limit: 10, remaining: 3, reset_ms: 30_001 },
  policies: [
    {
      name: 'api',
      mode: 'enforce',
      windows: [
        { name: 'minute', role: 'burst', limit: 10, remaining: 3, reset_ms: 30_001 },
        { name: 'day', role: 'sustained', limit: 1000, remaining: 900, reset_ms: 1 },
      ],
    },
    { name: 'trial', mode: 'shadow', would_deny: true, windows: [] },
  ],
  retry_after_ms: 0,
  ...extra,
});

describe(rateLimitHeaders.name, () => {
  it('names the binding window, rounds the reset up, and lists every enforced window', () => {
    expect(rateLimitHeaders(source('allowed'))).toEqual({
      'ratelimit-name': 'api',
      'ratelimit-limit': '10',
      'ratelimit-remaining': '3',
      'ratelimit-reset': '31',
      ratelimit: '"api.minute";r=3;t=31',
      'ratelimit-policy': '"api.minute";q=10, "api.day";q=1000',
    });
  });

  it.each([
    ['denied', 2_500, '3'],
    ['unavailable', 0, '1'],
  ] as const)('adds Retry-After in whole seconds, at least 1, when %s', (kind, retryAfterMs, expected) => {
    expect(rateLimitHeaders(source(kind, { retry_after_ms: retryAfterMs }))['retry-after']).toBe(expected);
  });

  it.each(['allowed', 'invalid', 'too_large', 'conflict'] as const)(
    'sends no Retry-After when %s',
    (kind) => {
      expect(rateLimitHeaders(source(kind, { retry_after_ms: 5000 }))).not.toHaveProperty('retry-after');
    },
  );

  it('sends nothing when no policy applies', () => {
    expect(rateLimitHeaders(source('allowed', { binding: null, policies: [] }))).toEqual({});
  });
});
