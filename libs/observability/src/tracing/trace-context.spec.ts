import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from './trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe(parseTraceparent.name, () => {
  it('reads a sampled and an unsampled parent', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 1,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled).toBe(false);
  });

  it.each([
    ['an unknown version', `01-${TRACE}-${SPAN}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['a zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['trailing data', `00-${TRACE}-${SPAN}-01-extra`],
    ['not a string', 7],
  ])('refuses %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('round-trips through formatTraceparent', () => {
    expect(formatTraceparent(TRACE, SPAN, true)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN, false))?.sampled).toBe(false);
  });
});
