import { describe, expect, it } from 'vitest';
import { eventually, sleep } from './eventually';

describe(eventually.name, () => {
  it('probes until done holds and resolves with that value', async () => {
    // given a probe that counts its calls
    let calls = 0;
    const probe = (): Promise<number> => Promise.resolve(++calls);

    // when done holds on the third value
    const sut = await eventually(probe, (n) => n >= 3, { timeoutMs: 1_000, intervalMs: 1 });

    // then it stopped right there
    expect(sut).toBe(3);
    expect(calls).toBe(3);
  });

  it('accepts a synchronous probe', async () => {
    expect(
      await eventually(
        () => 'ready',
        (s) => s === 'ready',
        { timeoutMs: 0, intervalMs: 1 },
      ),
    ).toBe('ready');
  });

  it('pauses intervalMs between two probes', async () => {
    const seen: number[] = [];
    const probe = (): number => seen.push(performance.now());

    await eventually(probe, (n) => n >= 3, { timeoutMs: 1_000, intervalMs: 30 });

    // timers may fire a millisecond early; two pauses of 30 ms stand between three probes
    expect((seen[2] ?? 0) - (seen[0] ?? 0)).toBeGreaterThanOrEqual(58);
  });

  it('fails after timeoutMs with what it waited for and the last value seen', async () => {
    let n = 0;
    const probe = (): { n: number } => ({ n: ++n });

    const sut = eventually(probe, () => false, { timeoutMs: 50, intervalMs: 10, what: 'n to reach 100' });

    await expect(sut).rejects.toThrow(
      new RegExp(`^timed out after 50 ms waiting for n to reach 100; last value: \\{"n":\\d+\\}$`),
    );
    expect(n).toBeGreaterThan(1);
  });

  it('probes once even when the time is already up, and fails with that value', async () => {
    let calls = 0;

    const sut = eventually(
      () => ++calls,
      () => false,
      { timeoutMs: -1, intervalMs: 10 },
    );

    await expect(sut).rejects.toThrow('timed out after -1 ms; last value: 1');
    expect(calls).toBe(1);
  });

  it('passes a probe failure on instead of retrying it', async () => {
    const sut = eventually(
      () => Promise.reject(new Error('refused')),
      () => true,
      { timeoutMs: 1_000, intervalMs: 1 },
    );

    await expect(sut).rejects.toThrow('refused');
  });
});

describe(sleep.name, () => {
  it('resolves after about the given time', async () => {
    const started = performance.now();

    await sleep(30);

    expect(performance.now() - started).toBeGreaterThanOrEqual(28);
  });
});
