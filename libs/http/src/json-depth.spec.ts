import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

const nested = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth);

describe(nestsDeeperThan.name, () => {
  it.each([
    ['a flat object', '{"selectors":{"tenant":"acme"},"cost":1}', 4, false],
    ['exactly the limit', nested(4), 4, false],
    ['one level more', nested(5), 4, true],
    ['objects count like arrays', `${'{"a":'.repeat(5)}1${'}'.repeat(5)}`, 4, true],
    ['siblings do not add up', `[${Array.from({ length: 50 }, () => '[[1]]').join(',')}]`, 3, false],
    ['brackets inside strings do not count', `["${'['.repeat(100)}"]`, 2, false],
    ['an escaped quote does not end a string', `["\\"${'['.repeat(100)}"]`, 2, false],
    ['an escaped backslash before a quote does end it', `["\\\\", ${nested(3)}]`, 3, true],
  ])('%s', (_name, text, max, expected) => {
    expect(nestsDeeperThan(text, max)).toBe(expected);
  });

  it('judges 10,000 levels without a stack of its own', () => {
    expect(nestsDeeperThan(nested(10_000), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('lets every body a Tally route takes through', () => {
    const batch = JSON.stringify({ requests: [{ selectors: { tenant: 'a' }, attributes: { plan: 'pro' } }] });

    expect(nestsDeeperThan(batch, MAX_JSON_DEPTH)).toBe(false);
  });
});
