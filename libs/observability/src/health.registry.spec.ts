import { describe, expect, it } from 'vitest';
import { HealthRegistry, overall, statesOnly } from './health.registry';

describe(HealthRegistry.name, () => {
  it('is healthy when every component is up', async () => {
    const sut = new HealthRegistry();
    sut.register('redis', () => ({ status: 'up' }));
    sut.register('kafka', () => Promise.resolve({ status: 'up' }));
    await expect(sut.report()).resolves.toEqual({
      status: 'healthy',
      components: { redis: { status: 'up' }, kafka: { status: 'up' } },
    });
  });

  it('counts a throwing check as down, with its message', async () => {
    const sut = new HealthRegistry();
    sut.register('redis', () => {
      throw new Error('ECONNREFUSED');
    });
    const report = await sut.report();
    expect(report.status).toBe('unavailable');
    expect(report.components.redis).toEqual({ status: 'down', detail: 'ECONNREFUSED' });
  });

  it('counts a hanging check as down after the deadline', async () => {
    const sut = new HealthRegistry();
    sut.register('kafka', () => new Promise(() => undefined));
    const report = await sut.report(20);
    expect(report.components.kafka).toEqual({ status: 'down', detail: 'no answer within 20 ms' });
  });

  it.each([
    [['up', 'up'], 'healthy'],
    [['up', 'degraded'], 'degraded'],
    [['degraded', 'down'], 'unavailable'],
    [[], 'healthy'],
  ] as const)('overall(%j) is %s', (statuses, expected) => {
    expect(overall(statuses)).toBe(expected);
  });
});

describe(statesOnly.name, () => {
  it('keeps each state and drops every detail (driver errors name hosts and ports)', () => {
    const sut = statesOnly({
      status: 'unavailable',
      components: {
        redis: { status: 'down', detail: 'connect ECONNREFUSED 10.0.0.7:6379' },
        policies: { status: 'up', detail: 'version 1a2b' },
        kafka: { status: 'degraded' },
      },
    });

    expect(sut).toEqual({
      status: 'unavailable',
      components: { redis: { status: 'down' }, policies: { status: 'up' }, kafka: { status: 'degraded' } },
    });
  });
});
