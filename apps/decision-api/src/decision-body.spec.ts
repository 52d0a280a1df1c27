import { describe, expect, it } from 'vitest';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './decision-body';

/**
 * The hot routes' shape checks, derived from the contract's JSON Schemas: the inputs the hand-written
 * checks (hot-body.ts) were held to, each with its exact answer. What changed on purpose: names of
 * Object.prototype (`toString`, `constructor`, `prototype`) are unknown fields like any other (the
 * class-transformer DTO let them vanish), a missing field is told once (not also "must be an
 * object"), and a list that is not an array is told only that.
 */
const sel = { tenant: 'acme', principal: 'svc-1' };
const err = (path: string, message: string) => ({ path, message });
const REQUIRED = err('selectors', 'selectors is required');
const SELECTORS = err('selectors', 'selectors must be an object of strings');
const ATTRIBUTES = err('attributes', 'attributes must be an object of strings');
const COST = err('cost', 'cost must be a whole number ≥ 0');
const KEY = err('idempotency_key', 'idempotency_key must be a string');
const unknown = (path: string, name = path) => err(path, `property ${name} should not exist`);

const VALID: readonly [string, unknown, unknown][] = [
  ['a minimal request (cost defaults to 1)', { selectors: sel }, { selectors: sel, cost: 1 }],
  [
    'every field',
    { selectors: sel, attributes: { plan: 'pro' }, cost: 3, idempotency_key: 'k' },
    { selectors: sel, attributes: { plan: 'pro' }, cost: 3, idempotency_key: 'k' },
  ],
  [
    'cost 0 and an empty key',
    { selectors: sel, cost: 0, idempotency_key: '' },
    { selectors: sel, cost: 0, idempotency_key: '' },
  ],
  [
    'a huge integer cost (the engine refuses it)',
    { selectors: sel, cost: 1e20 },
    { selectors: sel, cost: 1e20 },
  ],
  [
    'selector values of any type (the engine judges them)',
    { selectors: { tenant: 42, x: [1] } },
    { selectors: { tenant: 42, x: [1] }, cost: 1 },
  ],
  // The key's alphabet and length are the engine's rule (400 idempotency_key.invalid, one owner for
  // HTTP, batch items and the SDK): the shape checks let every string through.
  ...(['a\u0000b\nc', 'a\ud800', 'k'.repeat(256)].map((key) => [
    `an idempotency key ${JSON.stringify(key).slice(0, 12)}`,
    { selectors: sel, idempotency_key: key },
    { selectors: sel, idempotency_key: key, cost: 1 },
  ]) as [string, unknown, unknown][]),
  [
    'Object.prototype names inside selectors and attributes (the engine judges names)',
    { selectors: { ...sel, toString: 'x', constructor: 'z' }, attributes: { valueOf: 'v', prototype: 'p' } },
    {
      selectors: { ...sel, toString: 'x', constructor: 'z' },
      attributes: { valueOf: 'v', prototype: 'p' },
      cost: 1,
    },
  ],
];

const INVALID: readonly [string, unknown, readonly { path: string; message: string }[]][] = [
  ['null', null, [REQUIRED]],
  ['a string', 'selectors', [REQUIRED]],
  ['a number', 7, [REQUIRED]],
  ['a boolean', true, [REQUIRED]],
  ['an empty array', [], [REQUIRED]],
  ['an array of requests', [{ selectors: sel }, 2], [REQUIRED, unknown('[0]', '0'), unknown('[1]', '1')]],
  ['an empty object', {}, [REQUIRED]],
  ['no selectors', { cost: 1 }, [REQUIRED]],
  ['selectors a string', { selectors: 'acme' }, [SELECTORS]],
  ['selectors an array', { selectors: ['acme'] }, [SELECTORS]],
  ['selectors null', { selectors: null }, [SELECTORS]],
  ['attributes null', { selectors: sel, attributes: null }, [ATTRIBUTES]],
  ['attributes an array', { selectors: sel, attributes: [] }, [ATTRIBUTES]],
  ['attributes a string', { selectors: sel, attributes: 'x' }, [ATTRIBUTES]],
  ['cost "3"', { selectors: sel, cost: '3' }, [COST]],
  ['cost null', { selectors: sel, cost: null }, [COST]],
  ['cost true', { selectors: sel, cost: true }, [COST]],
  ['cost -1', { selectors: sel, cost: -1 }, [COST]],
  ['cost 1.5', { selectors: sel, cost: 1.5 }, [COST]],
  ['idempotency_key 7', { selectors: sel, idempotency_key: 7 }, [KEY]],
  ['idempotency_key null', { selectors: sel, idempotency_key: null }, [KEY]],
  [
    'unknown fields around bad ones',
    { zzz: 1, selectors: 5, aaa: 2, cost: 'x', idempotency_key: 1, attributes: 3 },
    [unknown('zzz'), unknown('aaa'), SELECTORS, ATTRIBUTES, COST, KEY],
  ],
  [
    'numeric unknown fields',
    { b: 1, 10: 1, 2: 1, selectors: sel },
    [unknown('[2]', '2'), unknown('[10]', '10'), unknown('b')],
  ],
  ['a typo of idempotency_key', { selectors: sel, idempotencykey: 'k' }, [unknown('idempotencykey')]],
  [
    'constructor and prototype keys',
    { constructor: 1, prototype: 2, selectors: sel },
    [unknown('constructor'), unknown('prototype')],
  ],
  [
    'inherited-function names',
    { toString: 1, hasOwnProperty: 2, valueOf: 3, selectors: sel },
    [unknown('toString'), unknown('hasOwnProperty'), unknown('valueOf')],
  ],
];

describe(checkDecisionBody.name, () => {
  it.each(VALID)('accepts %s', (_name, body, request) => {
    expect(checkDecisionBody(structuredClone(body))).toEqual({ ok: true, value: request });
  });

  it.each(INVALID)('refuses %s, naming each problem', (_name, body, errors) => {
    expect(checkDecisionBody(structuredClone(body))).toEqual({ ok: false, errors });
  });

  it('refuses a constructor key parsed from JSON like any unknown field', () => {
    // given the key as the JSON parser makes it: an own property, not the inherited function
    const body: unknown = JSON.parse('{"selectors":{"tenant":"acme"},"constructor":{"prototype":{}}}');

    expect(checkDecisionBody(body)).toEqual({ ok: false, errors: [unknown('constructor')] });
  });
});

describe('a deep body', () => {
  it('is judged without walking into values the shape leaves open', () => {
    // given a selector value far deeper than the call stack could walk (the JSON parser stops at 32
    // levels; the shape check must not depend on it)
    let deep: Record<string, unknown> = { prototype: 1 };
    for (let i = 0; i < 100_000; i++) deep = { a: deep };

    // when / then it passes the shape check (the engine refuses an object as a selector value)
    expect(checkDecisionBody({ selectors: { tenant: deep } }).ok).toBe(true);
  });
});

describe(checkDecisionItem.name, () => {
  it.each([7, null, 'x', [{ selectors: sel }]])(
    'refuses the item %j as not an object, at its path',
    (item) => {
      expect(checkDecisionItem(item, 'requests[3]')).toEqual({
        ok: false,
        errors: [err('requests[3]', 'must be an object')],
      });
    },
  );

  it('prefixes every path with the item path', () => {
    const sut = checkDecisionItem({ selectors: sel, cost: -1, extra: 1 }, 'requests[4]');

    expect(sut).toEqual({
      ok: false,
      errors: [unknown('requests[4].extra', 'extra'), err('requests[4].cost', COST.message)],
    });
  });

  it('accepts a valid item with the default cost', () => {
    expect(checkDecisionItem({ selectors: sel }, 'requests[0]')).toEqual({
      ok: true,
      value: { selectors: sel, cost: 1 },
    });
  });
});

describe(checkBatchBody.name, () => {
  const AT_MOST = err('requests', 'requests must hold at most 1000 decisions');
  const AT_LEAST = err('requests', 'requests must hold at least 1 decision');
  const ARRAY = err('requests', 'requests must be an array');
  const MISSING = err('requests', 'requests is required');
  const many = (n: number) => Array.from({ length: n }, () => ({ selectors: sel }));

  it.each([
    ['one request', { requests: [{ selectors: sel }] }],
    ['1000 requests', { requests: many(1000) }],
    ['items of any kind (each is judged on its own)', { requests: [7, null, { selectors: 5 }] }],
  ])('accepts %s, leaving the items unchecked', (_name, body) => {
    expect(checkBatchBody(structuredClone(body))).toEqual({ ok: true, value: body });
  });

  it.each([
    ['1001 requests', { requests: many(1001) }, [AT_MOST]],
    ['an empty list', { requests: [] }, [AT_LEAST]],
    ['no requests', {}, [MISSING]],
    ['requests an object', { requests: { selectors: sel } }, [ARRAY]],
    ['requests null', { requests: null }, [ARRAY]],
    ['null', null, [MISSING]],
    ['a string', 'x', [MISSING]],
    ['an array', [{ requests: [] }], [MISSING, unknown('[0]', '0')]],
    ['an unknown field', { requests: [{ selectors: sel }], dry_run: true }, [unknown('dry_run')]],
    [
      'constructor, prototype and inherited names',
      { requests: [1], constructor: 1, prototype: 1, toString: 1 },
      [unknown('constructor'), unknown('prototype'), unknown('toString')],
    ],
  ])('refuses %s', (_name, body, errors) => {
    expect(checkBatchBody(structuredClone(body))).toEqual({ ok: false, errors });
  });
});
