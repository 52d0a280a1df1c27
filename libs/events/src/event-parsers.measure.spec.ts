import { describe, expect, it } from 'vitest';
import { decisionEventFromOutbox, usageEventFromOutbox } from './event-builders';
import { parseLedgerEvent } from './event-parsers';

/**
 * A micro-measurement of the projector's per-event parse (JSON.parse + validation), printed, never
 * asserted: a figure on a shared machine is a hint, and the benchmark suite owns the numbers. It
 * exists so a change of the validator reports what it costs (issue 10: ≈ 20 µs/event in total).
 */
const entry = {
  p: JSON.stringify({
    v: 1,
    outcome: 'allowed',
    id: '01JD5Z8M3KQ7W4X9T2B6N0R1CE',
    policy_set_version: 'sha256:abc',
    tenant: 'acme',
    selectors: { tenant: 'acme', principal: 'svc-42', token: 't_9f1c' },
    attributes: { principal_class: 'machine' },
    cost: 3,
    policies: [
      {
        name: 'notary',
        mode: 'enforce',
        key: 'svc-42',
        windows: [
          { name: 'burst', role: 'burst', limit: 100 },
          { name: 'sustained', role: 'sustained', limit: 6000 },
        ],
      },
    ],
  }),
  t: '1796029200123',
  r: JSON.stringify([
    { remaining: 97, reset_ms: 30, would_deny: false },
    { remaining: 5997, reset_ms: 47000, would_deny: false },
  ]),
};

describe('parseLedgerEvent cost', () => {
  it('prints µs per event', () => {
    const messages = [
      JSON.stringify(usageEventFromOutbox(entry)),
      JSON.stringify(decisionEventFromOutbox(entry)),
    ];
    const buffers = Array.from({ length: 2000 }, (_, i) => Buffer.from(messages[i % 2]));
    let ok = 0;
    for (const b of buffers) if (parseLedgerEvent(b).ok) ok++; // warm-up
    // The fastest of many rounds: the other processes of a busy machine only ever add time.
    const rounds = 25;
    let best = Infinity;
    for (let r = 0; r < rounds; r++) {
      const start = process.hrtime.bigint();
      for (const b of buffers) if (parseLedgerEvent(b).ok) ok++;
      best = Math.min(best, Number(process.hrtime.bigint() - start) / buffers.length);
    }
    console.log(`parseLedgerEvent: ${(best / 1000).toFixed(2)} µs/event (best of ${rounds} rounds)`);
    expect(ok).toBe((rounds + 1) * buffers.length);
  });
});
