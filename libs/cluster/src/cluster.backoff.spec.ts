import { describe, expect, it } from 'vitest';
import { nextRestart, RESTART_CAP_MS, STABLE_MS } from './cluster.backoff';

describe(nextRestart.name, () => {
  it('doubles the delay for each quick death in a row, up to the cap', () => {
    let deaths = 0;
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = nextRestart(100, deaths);
      deaths = next.deathsInARow;
      delays.push(next.delayMs);
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, RESTART_CAP_MS, RESTART_CAP_MS]);
  });

  it('starts over after a worker that lived long enough', () => {
    expect(nextRestart(STABLE_MS, 6)).toEqual({ deathsInARow: 1, delayMs: 250 });
    expect(nextRestart(STABLE_MS - 1, 6)).toEqual({ deathsInARow: 7, delayMs: RESTART_CAP_MS });
  });
});
