import fc from 'fast-check';
import { isRFC3339 } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { RFC3339 } from './event-validators';

describe('RFC3339', () => {
  // Events were validated with class-validator's isRFC3339; the schema's `date-time` must give the
  // same verdict on every timestamp, or a replay would judge old events differently.
  it.each([
    '2026-11-30T09:00:00.123Z',
    '2026-11-30t09:00:00Z',
    '2026-11-30 09:00:00+01:00',
    '2026-11-30T23:59:60.5-12:00',
    '2026-11-30T09:00:00',
    '2026-13-30T09:00:00Z',
    '2026-11-32T09:00:00Z',
    '2026-11-30T24:00:00Z',
    '2026-11-30T09:00:00.Z',
    '26-11-30T09:00:00Z',
    '',
  ])('agrees with class-validator on %j', (text) => {
    expect(RFC3339.test(text)).toBe(isRFC3339(text));
  });

  it('agrees with class-validator on generated timestamps', () => {
    const digits = (n: number) =>
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
    const stamp = fc
      .tuple(
        digits(4),
        digits(2),
        digits(2),
        fc.constantFrom('T', 't', ' ', 'x'),
        digits(2),
        digits(2),
        digits(2),
        fc.constantFrom('', '.', '.1', '.123456'),
        fc.constantFrom('Z', 'z', '', '+01:00', '-23:59', '+24:00', '+1:00'),
      )
      .map(([y, mo, d, t, h, mi, s, f, z]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f}${z}`);
    fc.assert(
      fc.property(fc.oneof(stamp, fc.string()), (text) => RFC3339.test(text) === isRFC3339(text)),
      {
        numRuns: 2000,
      },
    );
  });
});
