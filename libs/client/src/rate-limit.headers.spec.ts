import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders, pickRateLimitHeaders } from './rate-limit.headers';

describe(parseRateLimitHeaders.name, () => {
  it('reads the binding window, every enforced quota and Retry-After', () => {
    const sut = parseRateLimitHeaders({
      'ratelimit-name': 'notary',
      'ratelimit-limit': '6000',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '47',
      ratelimit: '"notary.sustained";r=0;t=47',
      'ratelimit-policy': '"notary.burst";q=100, "notary.sustained";q=6000',
      'retry-after': '47',
    });

    expect(sut).toEqual({
      binding: { policy: 'notary', window: 'sustained', limit: 6000, remaining: 0, resetSeconds: 47 },
      quotas: [
        { id: 'notary.burst', limit: 100 },
        { id: 'notary.sustained', limit: 6000 },
      ],
      retryAfterSeconds: 47,
    });
  });

  it('keeps dots of policy and window names apart by the known policy name', () => {
    const sut = parseRateLimitHeaders({
      'ratelimit-name': 'api.v2',
      'ratelimit-limit': '5',
      'ratelimit-remaining': '4',
      'ratelimit-reset': '1',
      ratelimit: '"api.v2.per.second";r=4;t=1',
    });

    expect(sut.binding?.window).toBe('per.second');
  });

  it('unescapes quoted names in the structured headers', () => {
    const sut = parseRateLimitHeaders({ 'ratelimit-policy': '"we\\"ird.w";q=3' });

    expect(sut.quotas).toEqual([{ id: 'we"ird.w', limit: 3 }]);
  });

  it('reports no binding when a number is missing or malformed, never NaN', () => {
    const sut = parseRateLimitHeaders({
      'ratelimit-name': 'p',
      'ratelimit-limit': 'ten',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '1',
      'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT',
    });

    expect(sut).toEqual({ binding: null, quotas: [], retryAfterSeconds: null });
  });

  it('gives an unknown window as null when the draft RateLimit header is absent', () => {
    const sut = parseRateLimitHeaders({
      'ratelimit-name': 'p',
      'ratelimit-limit': '10',
      'ratelimit-remaining': '9',
      'ratelimit-reset': '60',
    });

    expect(sut.binding).toEqual({ policy: 'p', window: null, limit: 10, remaining: 9, resetSeconds: 60 });
  });
});

describe(pickRateLimitHeaders.name, () => {
  it('keeps only the relayable headers, joining repeated ones', () => {
    const sut = pickRateLimitHeaders({
      'content-type': 'application/json',
      'ratelimit-limit': '10',
      'retry-after': '3',
      'ratelimit-policy': ['"a.w";q=1', '"b.w";q=2'],
      connection: 'keep-alive',
    });

    expect(sut).toEqual({
      'ratelimit-limit': '10',
      'ratelimit-policy': '"a.w";q=1, "b.w";q=2',
      'retry-after': '3',
    });
  });
});
