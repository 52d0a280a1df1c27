import { describe, expect, it } from 'vitest';
import { unpackWindowState } from './policy-state-hash';

describe(unpackWindowState.name, () => {
  it.each([
    ['fixed_window', '28885000:12', { b: '28885000', c: '12' }],
    ['calendar_month', '24322:7', { b: '24322', c: '7' }],
    ['sliding_window', '28885000:12:30', { b: '28885000', c: '12', p: '30' }],
    ['token_bucket', 't9999999000:1796168965074', { t: '9999999000', ts: '1796168965074' }],
    // the counters read each other's state, as they shared the fields `b` and `c` before
    ['fixed_window', '28885000:12:30', { b: '28885000', c: '12' }],
    ['sliding_window', '28885000:12', { b: '28885000', c: '12' }],
    // a token bucket and a counter never read each other's state: it starts afresh
    ['token_bucket', '28885000:12', {}],
    ['fixed_window', 't9999999000:1796168965074', {}],
    ['fixed_window', null, {}],
    ['token_bucket', undefined, {}],
  ] as const)('%s reads %s', (algorithm, value, expected) => {
    expect(unpackWindowState(algorithm, value)).toEqual(expected);
  });
});
