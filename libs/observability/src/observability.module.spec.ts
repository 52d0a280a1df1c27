import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS } from './observability.constants';
import { ObservabilityModule } from './observability.module';

// prom-client reads perf_hooks through require: the same object is spied on here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const perfHooks = require('node:perf_hooks') as typeof import('node:perf_hooks');

afterEach(() => vi.restoreAllMocks());

describe(ObservabilityModule.name, () => {
  it('samples the event-loop delay every 100 ms, not at the 10 ms that woke an idle process 100 times a second', () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');

    ObservabilityModule.forRoot({ app: 'spec' });

    expect(monitor).toHaveBeenCalledTimes(1);
    expect(monitor.mock.calls[0][0]?.resolution).toBe(EVENT_LOOP_SAMPLE_MS);
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100);
  });

  it('starts no sampler without default metrics', () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');

    ObservabilityModule.forRoot({ app: 'spec', defaultMetrics: false });

    expect(monitor).not.toHaveBeenCalled();
  });
});
