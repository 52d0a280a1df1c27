import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type BreakerState } from './circuit-breaker';

describe(CircuitBreaker.name, () => {
  function setup() {
    let now = 0;
    const changes: BreakerState[] = [];
    const sut = new CircuitBreaker(
      { failureThreshold: 3, cooldownMs: 100 },
      () => now,
      (s) => changes.push(s),
    );
    return { sut, changes, advance: (ms: number) => (now += ms) };
  }

  it('opens after the threshold of consecutive failures, not before', () => {
    const { sut, changes } = setup();
    sut.failure();
    sut.failure();
    sut.success(); // resets the run
    sut.failure();
    sut.failure();
    expect(sut.state).toBe('closed');
    sut.failure();
    expect(sut.state).toBe('open');
    expect(sut.tryAcquire()).toBe(false);
    expect(changes).toEqual(['open']);
  });

  it('lets exactly one probe through after the cooldown; its success closes the breaker', () => {
    const { sut, changes, advance } = setup();
    for (let i = 0; i < 3; i++) sut.failure();
    advance(99);
    expect(sut.tryAcquire()).toBe(false);
    expect(sut.remainingCooldownMs()).toBe(1);
    advance(1);
    expect(sut.tryAcquire()).toBe(true);
    expect(sut.state).toBe('half_open');
    expect(sut.tryAcquire()).toBe(false);
    sut.success();
    expect(sut.state).toBe('closed');
    expect(sut.tryAcquire()).toBe(true);
    expect(changes).toEqual(['open', 'half_open', 'closed']);
  });

  it('re-opens for another cooldown when the probe fails', () => {
    const { sut, advance } = setup();
    for (let i = 0; i < 3; i++) sut.failure();
    advance(100);
    expect(sut.tryAcquire()).toBe(true);
    sut.failure();
    expect(sut.state).toBe('open');
    advance(50);
    expect(sut.tryAcquire()).toBe(false);
  });

  it('frees the probe slot on a neutral answer (a script error) without closing', () => {
    const { sut, advance } = setup();
    for (let i = 0; i < 3; i++) sut.failure();
    advance(100);
    expect(sut.tryAcquire()).toBe(true);
    sut.release();
    expect(sut.state).toBe('half_open');
    expect(sut.tryAcquire()).toBe(true);
  });
});
