import { describe, expect, it } from 'vitest';
import { decodeOverride, encodeLimits, encodeMeta, inForce } from './override-record';

describe(decodeOverride.name, () => {
  it('reads what the write script stores (version; expiry; limits, then the metadata)', () => {
    const stored = `7;${encodeLimits({ hourly: 0, daily: 50 }, 1_000)}\n${encodeMeta('abuse', 'ops').slice(0, -1)},"updated_at":900}`;
    const sut = decodeOverride('p:a%3Ab:a%3Ab:x', stored);
    expect(sut).toEqual({
      policy: 'p',
      tenant: 'a:b',
      key: 'a%3Ab:x',
      limits: { hourly: 0, daily: 50 },
      expiresAtMs: 1_000,
      reason: 'abuse',
      setBy: 'ops',
      version: 7,
      updatedAtMs: 900,
    });
    expect(inForce(sut!, 999)).toBe(true);
    expect(inForce(sut!, 1_000)).toBe(false);
  });

  it('an override without expiry is in force forever; a value of another format is null', () => {
    const sut = decodeOverride('p:_:k', `1;;w=3\n{"reason":"r","set_by":"s","updated_at":1}`);
    expect(sut).toMatchObject({ tenant: null, expiresAtMs: null, limits: { w: 3 } });
    expect(inForce(sut!, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(decodeOverride('p:_:k', 'garbage')).toBeNull();
  });
});
