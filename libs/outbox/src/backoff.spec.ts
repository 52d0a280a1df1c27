import { describe, expect, it } from 'vitest';
import { backoffMs, sleep } from './backoff';

describe(backoffMs.name, () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 10, 1000].map((n) => backoffMs(n, 100, 1000))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });
});

describe(sleep.name, () => {
  it('ends early when aborted', async () => {
    const abort = new AbortController();
    const started = performance.now();
    const sut = sleep(10_000, abort.signal);
    abort.abort();
    await sut;
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
