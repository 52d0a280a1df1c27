import { seededRandom } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { backoffMs, jitteredBackoffMs, sleep } from './backoff';

describe(backoffMs.name, () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 10, 1000].map((n) => backoffMs(n, 100, 1000))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });
});

describe(jitteredBackoffMs.name, () => {
  it.each([
    { random: 0, attempt: 0, wait: 0 },
    { random: 0.5, attempt: 0, wait: 50 },
    { random: 0.5, attempt: 3, wait: 400 },
    { random: 0.5, attempt: 10, wait: 500 },
    { random: 0.999_999, attempt: 2, wait: 399 },
    { random: 0.999_999, attempt: 1000, wait: 999 },
  ])('draws $random of the ceiling at attempt $attempt: $wait ms', ({ random, attempt, wait }) => {
    expect(jitteredBackoffMs(attempt, 100, 1000, () => random)).toBe(wait);
  });

  it('stays within [0, ceiling) for any draw, at every attempt', () => {
    const random = seededRandom(7);
    const outside: unknown[] = [];
    for (let attempt = 0; attempt < 30; attempt++) {
      const ceiling = backoffMs(attempt, 100, 5000);
      for (let i = 0; i < 200; i++) {
        const wait = jitteredBackoffMs(attempt, 100, 5000, random);
        if (!Number.isInteger(wait) || wait < 0 || wait >= ceiling) outside.push({ attempt, wait });
      }
    }

    expect(outside).toEqual([]);
  });

  it('spreads relays that failed together over the whole window instead of lockstep', () => {
    // given: 100 relays, each with its own random source, retrying the same attempt after one outage
    const relays = Array.from({ length: 100 }, (_, i) => seededRandom(1000 + i));
    const ceiling = backoffMs(5, 100, 5000);

    const jittered = relays.map((random) => jitteredBackoffMs(5, 100, 5000, random));
    const plain = relays.map(() => backoffMs(5, 100, 5000));

    // then: without jitter every relay waits the same; with it, every tenth of the window is used
    expect(new Set(plain).size).toBe(1);
    expect(new Set(jittered).size).toBeGreaterThan(90);
    const tenths = new Set(jittered.map((w) => Math.floor((w / ceiling) * 10)));
    expect([...tenths].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Math.max(...jittered)).toBeLessThan(ceiling);
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
