import { describe, expect, it } from 'vitest';
import { parseExposition, SampleRing, type SampledSeries } from './metric-samples';

const TEXT = `# HELP tally_decisions_total Decisions
# TYPE tally_decisions_total counter
tally_decisions_total{policy="p1",outcome="allowed",reason=""} 10
tally_decisions_total{policy="p1",outcome="denied",reason="burst_quota_exhausted"} 4
tally_decisions_total{policy="p\\"2",outcome="allowed",reason=""} 1
tally_other 3
tally_outbox_length 7
`;

const NAMES = new Set(['tally_decisions_total', 'tally_outbox_length']);
const byOutcome = (s: SampledSeries) => (s.name === 'tally_decisions_total' ? s.labels.outcome : null);

describe(parseExposition.name, () => {
  it('reads the named metrics with their labels, unescaping values', () => {
    const sut = parseExposition(TEXT, NAMES);

    expect(sut).toEqual([
      { name: 'tally_decisions_total', labels: { policy: 'p1', outcome: 'allowed', reason: '' }, value: 10 },
      {
        name: 'tally_decisions_total',
        labels: { policy: 'p1', outcome: 'denied', reason: 'burst_quota_exhausted' },
        value: 4,
      },
      { name: 'tally_decisions_total', labels: { policy: 'p"2', outcome: 'allowed', reason: '' }, value: 1 },
      { name: 'tally_outbox_length', labels: {}, value: 7 },
    ]);
  });
});

describe(SampleRing.name, () => {
  const sample = (atMs: number, allowed: number, denied?: number) => ({
    atMs,
    series: [
      { name: 'tally_decisions_total', labels: { outcome: 'allowed' }, value: allowed },
      ...(denied === undefined
        ? []
        : [{ name: 'tally_decisions_total', labels: { outcome: 'denied' }, value: denied }]),
    ],
  });

  it('turns consecutive samples into per-second rates per group, zero before a group appears', () => {
    const sut = new SampleRing(10);
    sut.push(sample(0, 0));
    sut.push(sample(10_000, 50));
    sut.push(sample(20_000, 150, 20));

    expect(sut.rates(byOutcome)).toEqual([
      {
        label: 'allowed',
        points: [
          [10_000, 5],
          [20_000, 10],
        ],
      },
      {
        label: 'denied',
        points: [
          [10_000, 0],
          [20_000, 2],
        ],
      },
    ]);
  });

  it('counts a counter that went down (a restart) from zero, and forgets past its capacity', () => {
    const sut = new SampleRing(2);
    sut.push(sample(0, 999));
    sut.push(sample(1000, 100));
    sut.push(sample(2000, 30));

    expect(sut.rates(byOutcome)).toEqual([{ label: 'allowed', points: [[2000, 30]] }]);
    expect(sut.latest?.atMs).toBe(2000);
  });
});
