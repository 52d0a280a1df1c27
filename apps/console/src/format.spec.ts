import { describe, expect, it } from 'vitest';
import { tick, timeTicks } from './format';

const at = (iso: string) => Date.parse(iso);

describe(timeTicks.name, () => {
  it('labels sub-day steps in 24 h UTC, the first one with its day', () => {
    const splits = [at('2026-12-02T09:35:00Z'), at('2026-12-02T13:40:00Z')];
    expect(timeTicks(splits, 300_000)).toEqual(['09:35\n2026-12-02', '13:40']);
    expect(timeTicks([at('2026-12-02T09:35:05Z')], 5_000)).toEqual(['09:35:05\n2026-12-02']);
  });

  it('labels day steps by date and month steps by month', () => {
    expect(timeTicks([at('2026-12-02T00:00:00Z')], 86_400_000)).toEqual(['2026-12-02']);
    expect(timeTicks([at('2026-12-01T00:00:00Z')], 31 * 86_400_000)).toEqual(['2026-12']);
  });
});

describe(tick.name, () => {
  it('shows whole numbers whole and fractions to 3 significant digits', () => {
    expect([0, 2, 10, 12_000, 2.5, 0.125, 1 / 3].map(tick)).toEqual([
      '0',
      '2',
      '10',
      '12k',
      '2.5',
      '0.125',
      '0.333',
    ]);
  });
});
