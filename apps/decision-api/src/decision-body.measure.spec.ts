import { describe, expect, it } from 'vitest';
// The hand-written checks this validator replaced, kept under test/bench only as the baseline.
import * as baseline from '../../../test/bench/hot-body.baseline';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './decision-body';

/**
 * Micro-measurement, printed and not asserted (a busy machine must not fail it): nanoseconds per
 * call of the schema-derived checks against the hand-written ones of hot-body.ts, on the hot path's
 * usual body, a refused body and a batch of 100. Run: `npx vitest run --project unit decision-body.measure`.
 */
const sel = { tenant: 'acme', principal: 'svc-1', route: 'GET /v1/things' };
const fresh = () => ({ selectors: { ...sel }, attributes: { plan: 'pro' }, cost: 1, idempotency_key: 'k-1' });
const refused = () => ({ selectors: 'acme', cost: -1, extra: true });
const batch = () => ({ requests: Array.from({ length: 100 }, fresh) });

function nsPerCall(make: () => unknown, check: (body: unknown) => unknown, calls = 20_000): number {
  const inputs = Array.from({ length: calls }, make);
  for (let i = 0; i < 2_000; i++) check(make()); // warm-up: let both reach optimized code
  const started = process.hrtime.bigint();
  for (const input of inputs) check(input);
  return Number(process.hrtime.bigint() - started) / calls;
}

const batchOf =
  (
    envelope: (body: unknown) => { ok: boolean; value?: { requests: unknown[] } },
    item: (value: unknown, path: string) => unknown,
  ) =>
  (body: unknown) => {
    const checked = envelope(body);
    if (checked.ok && checked.value) checked.value.requests.forEach((r, i) => item(r, `requests[${i}]`));
  };

describe('decision body checks: schema-derived vs hand-written', () => {
  it('prints ns per call', () => {
    const rows = {
      'valid request': [nsPerCall(fresh, checkDecisionBody), nsPerCall(fresh, baseline.checkDecisionBody)],
      'refused request': [
        nsPerCall(refused, checkDecisionBody),
        nsPerCall(refused, baseline.checkDecisionBody),
      ],
      'batch of 100': [
        nsPerCall(batch, batchOf(checkBatchBody, checkDecisionItem), 500),
        nsPerCall(batch, batchOf(baseline.checkBatchBody, baseline.checkDecisionItem), 500),
      ],
    };
    for (const [name, [schema, hand]] of Object.entries(rows))
      console.log(
        `${name.padEnd(16)} schema ${schema.toFixed(0).padStart(7)} ns   hand ${hand.toFixed(0).padStart(7)} ns`,
      );
    expect(Object.values(rows).flat().every(Number.isFinite)).toBe(true);
  });
});
