import { DECISION_KINDS, DENY_REASONS as WIRE_DENY_REASONS } from '@tally/api-contract';
import { DENY_REASONS } from '@tally/events';
import { describe, expect, it } from 'vitest';

/**
 * The decision body's `reason` is published by the API contract and recorded by the events: two
 * vocabularies that must stay one. (The contract cannot import the events lib: it is dependency-free
 * for the SDK.)
 */
describe('the decision contract', () => {
  it('publishes exactly the deny reasons the events record', () => {
    expect([...WIRE_DENY_REASONS].sort()).toEqual([...DENY_REASONS].sort());
  });

  it('has the six kinds every transport maps', () => {
    expect(DECISION_KINDS).toEqual(['allowed', 'denied', 'invalid', 'too_large', 'conflict', 'unavailable']);
  });
});
