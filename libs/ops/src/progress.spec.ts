import { describe, expect, it } from 'vitest';
import { ProgressMeter } from './progress';

describe(ProgressMeter.name, () => {
  it('gives the rate since the start and the time left at that rate', () => {
    let now = 1000;
    const sut = new ProgressMeter(1000, () => now);
    now = 3000;

    expect(sut.snapshot(250)).toEqual({
      done: 250,
      total: 1000,
      elapsedMs: 2000,
      perSecond: 125,
      etaMs: 6000,
    });
  });

  it('has no ETA before anything was done', () => {
    const sut = new ProgressMeter(10, () => 0);

    expect(sut.snapshot(0).etaMs).toBeNull();
  });
});
