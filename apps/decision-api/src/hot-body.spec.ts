import 'reflect-metadata';
import { type HttpException } from '@nestjs/common';
import { strictValidationPipe, validateAs, type FieldError } from '@tally/http';
import { describe, expect, it } from 'vitest';
import { BatchRequestDto, DecisionRequestDto } from './decision.dto';
import { checkBatchBody, checkDecisionBody, checkDecisionItem } from './hot-body';

/**
 * The hand-written checks against the reference they replace, input by input: the global validation
 * pipe on the DTOs of decision.dto.ts (the body of each route) and `validateAs` (each batch item, as
 * it comes out of the envelope: the pipe has already stripped its prototype keys there).
 */
const sel = { tenant: 'acme', principal: 'svc-1' };
const BODIES: readonly [string, unknown][] = [
  ['a minimal request', { selectors: sel }],
  ['every field', { selectors: sel, attributes: { plan: 'pro' }, cost: 3, idempotency_key: 'k' }],
  ['cost 0 and an empty key', { selectors: sel, cost: 0, idempotency_key: '' }],
  ['a huge integer cost (the engine refuses it)', { selectors: sel, cost: 1e20 }],
  ['null', null],
  ['a string', 'selectors'],
  ['a number', 7],
  ['a boolean', true],
  ['an empty array', []],
  ['an array of requests', [{ selectors: sel }, 2]],
  ['an empty object', {}],
  ['no selectors', { cost: 1 }],
  ['selectors a string', { selectors: 'acme' }],
  ['selectors an array', { selectors: ['acme'] }],
  ['selectors null', { selectors: null }],
  ['selector values of any type (the engine judges them)', { selectors: { tenant: 42, x: [1] } }],
  ['attributes null', { selectors: sel, attributes: null }],
  ['attributes an array', { selectors: sel, attributes: [] }],
  ['attributes a string', { selectors: sel, attributes: 'x' }],
  ['cost "3"', { selectors: sel, cost: '3' }],
  ['cost null', { selectors: sel, cost: null }],
  ['cost true', { selectors: sel, cost: true }],
  ['cost -1', { selectors: sel, cost: -1 }],
  ['cost 1.5', { selectors: sel, cost: 1.5 }],
  ['idempotency_key 7', { selectors: sel, idempotency_key: 7 }],
  // The key's alphabet and length are the engine's rule (400 idempotency_key.invalid, one owner for
  // HTTP, batch items and the SDK): the shape checks let every string through, both alike.
  ['an idempotency key with control characters', { selectors: sel, idempotency_key: 'a\u0000b\nc' }],
  ['an idempotency key with a lone surrogate', { selectors: sel, idempotency_key: 'a\ud800' }],
  ['an idempotency key of 256 characters', { selectors: sel, idempotency_key: 'k'.repeat(256) }],
  ['idempotency_key null', { selectors: sel, idempotency_key: null }],
  [
    'unknown fields around bad ones',
    { zzz: 1, selectors: 5, aaa: 2, cost: 'x', idempotency_key: 1, attributes: 3 },
  ],
  ['numeric unknown fields', { b: 1, 10: 1, 2: 1, selectors: sel }],
  ['a typo of idempotency_key', { selectors: sel, idempotencykey: 'k' }],
  ['constructor and prototype keys', { constructor: 1, prototype: 2, selectors: sel }],
  ['inherited-function names', { toString: 1, hasOwnProperty: 2, valueOf: 3, selectors: sel }],
  [
    'inherited-function and prototype names in selectors and attributes',
    {
      selectors: { ...sel, toString: 'x', prototype: 'y', constructor: 'z' },
      attributes: { valueOf: 'v', plan: 'pro', prototype: 'p' },
    },
  ],
  ['prototype keys deeper down', { selectors: { tenant: { prototype: 1, a: 1 } } }],
];

const clone = <T>(value: T): T => structuredClone(value);

async function viaPipe(metatype: new () => object, body: unknown) {
  try {
    return {
      ok: true as const,
      value: (await strictValidationPipe().transform(body, { type: 'body', metatype })) as object,
    };
  } catch (error) {
    return {
      ok: false as const,
      errors: ((error as HttpException).getResponse() as { errors: FieldError[] }).errors,
    };
  }
}

describe(checkDecisionBody.name, () => {
  it.each(BODIES)('answers %s exactly as the validation pipe', async (_name, body) => {
    const expected = await viaPipe(DecisionRequestDto, clone(body));

    const sut = checkDecisionBody(clone(body));

    if (expected.ok) {
      // the controller made the request as `{ ...dto, cost: dto.cost ?? 1 }`
      const dto = expected.value as DecisionRequestDto;
      expect(sut).toEqual({ ok: true, value: { ...dto, cost: dto.cost ?? 1 } });
    } else expect(sut).toEqual(expected);
  });
});

describe(checkBatchBody.name, () => {
  const ENVELOPES: readonly [string, unknown][] = [
    ['one request', { requests: [{ selectors: sel }] }],
    ['1000 requests', { requests: Array.from({ length: 1000 }, () => ({ selectors: sel })) }],
    ['1001 requests', { requests: Array.from({ length: 1001 }, () => ({ selectors: sel })) }],
    ['an empty list', { requests: [] }],
    ['no requests', {}],
    ['requests an object', { requests: { selectors: sel } }],
    ['requests null', { requests: null }],
    ['null', null],
    ['a string', 'x'],
    ['an array', [{ requests: [] }]],
    ['an unknown field', { requests: [{ selectors: sel }], dry_run: true }],
    [
      'constructor, prototype and inherited names',
      { requests: [1], constructor: 1, prototype: 1, toString: 1 },
    ],
    ['items of every kind', { requests: BODIES.map(([, body]) => body) }],
  ];

  it.each(ENVELOPES)('answers %s exactly as the pipe, and each item as validateAs', async (_name, body) => {
    const expected = await viaPipe(BatchRequestDto, clone(body));

    const sut = checkBatchBody(clone(body));

    if (!expected.ok) {
      expect(sut).toEqual(expected);
      return;
    }
    if (!sut.ok) throw new Error(JSON.stringify(sut.errors));
    const { requests } = expected.value as BatchRequestDto;
    expect(sut.value.requests).toHaveLength(requests.length);
    requests.forEach((item, i) => {
      const reference = validateAs(DecisionRequestDto, item, `requests[${i}]`);
      const mine = checkDecisionItem(sut.value.requests[i], `requests[${i}]`);
      if (reference.ok)
        expect(mine).toEqual({ ok: true, value: { ...reference.value, cost: reference.value.cost ?? 1 } });
      else expect(mine).toEqual(reference);
    });
  });
});

describe('prototype keys at any depth', () => {
  it('are stripped from a 100,000-level body without recursion', () => {
    // given a body far deeper than the call stack could walk (the JSON parser stops at 32 levels;
    // this walk must not depend on it)
    let deep: Record<string, unknown> = { prototype: 1 };
    for (let i = 0; i < 100_000; i++) deep = { a: deep, prototype: 1 };
    const body = { selectors: { tenant: deep } };

    // when
    const sut = checkDecisionBody(body);

    // then it is judged (the engine refuses an object as a selector value), and no level kept the key
    expect(sut.ok).toBe(true);
    let level: Record<string, unknown> | undefined = deep;
    let levels = 0;
    let kept = 0;
    while (level) {
      if (Object.prototype.hasOwnProperty.call(level, 'prototype')) kept++;
      level = level.a as Record<string, unknown> | undefined;
      levels++;
    }
    expect({ levels, kept }).toEqual({ levels: 100_001, kept: 0 });
  });
});
