import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OutboxStreams } from './outbox-streams';
import { RelayLifecycle } from './relay-lifecycle';
import { RelayMetrics } from './relay.metrics';
import { resolveRelayOptions } from './relay.options';

function lifecycleWith(random: () => number): RelayLifecycle {
  const options = resolveRelayOptions(
    {
      redis: { mode: 'single', url: 'redis://unused' },
      shards: 1,
      topicPartitions: 1,
      topicReplication: 1,
      retryBaseMs: 1000,
      retryMaxMs: 8000,
      random,
    },
    () => 'test',
  );
  return new RelayLifecycle(options, new RelayMetrics(new Registry(), options, {} as OutboxStreams));
}

describe(RelayLifecycle.name, () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits a random share of the doubling ceiling between retries (full jitter)', async () => {
    // given: a step that fails three times, and a source that always draws 0.5
    vi.useFakeTimers();
    const attemptsAt: number[] = [];
    let calls = 0;
    const sut = lifecycleWith(() => 0.5);

    const done = sut.retry('produce', () => {
      attemptsAt.push(Date.now());
      return ++calls <= 3 ? Promise.reject(new Error('broker down')) : Promise.resolve();
    });
    await vi.runAllTimersAsync();

    // then: half of 1 s, 2 s and 4 s between the attempts
    expect(await done).toBe(true);
    expect(attemptsAt.slice(1).map((at, i) => at - attemptsAt[i])).toEqual([500, 1000, 2000]);
  });

  it('draws each wait from its own random source, so two relays failing together part ways', async () => {
    vi.useFakeTimers();
    const retryAt = async (draw: number): Promise<number> => {
      const attemptsAt: number[] = [];
      const sut = lifecycleWith(() => draw);
      const done = sut.retry('produce', () => {
        attemptsAt.push(Date.now());
        return attemptsAt.length === 1 ? Promise.reject(new Error('broker down')) : Promise.resolve();
      });
      await vi.runAllTimersAsync();
      await done;
      return attemptsAt[1] - attemptsAt[0];
    };

    const waits = [await retryAt(0.1), await retryAt(0.9)];

    expect(waits).toEqual([100, 900]);
  });
});
