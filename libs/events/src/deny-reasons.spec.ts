import { describe, expect, it } from 'vitest';
import { DENY_REASONS, isDenyReason } from './deny-reasons';

describe('DENY_REASONS', () => {
  it('is exactly the vocabulary of DESIGN §3, in order', () => {
    expect(DENY_REASONS).toEqual([
      'burst_quota_exhausted',
      'sustained_quota_exhausted',
      'selector_identity_missing',
      'selector_identity_invalid',
      'backend_timeout',
      'backend_unavailable',
      'backend_error',
      'blocked',
    ]);
  });
});

describe(isDenyReason.name, () => {
  it.each([
    ['burst_quota_exhausted', true],
    ['backend_error', true],
    ['quota_exhausted', false],
    ['BURST_QUOTA_EXHAUSTED', false],
    ['', false],
    [undefined, false],
    [3, false],
  ])('isDenyReason(%j) is %s', (value, expected) => {
    expect(isDenyReason(value)).toBe(expected);
  });
});
