import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { compileSchemaCheck } from './schema-validator';

describe(compileSchemaCheck.name, () => {
  const sut = compileSchemaCheck(
    Type.Object(
      {
        items: Type.Array(Type.Object({ n: Type.Integer({ errorMessage: 'n must be whole' }) })),
        'a/b': Type.Optional(Type.String()),
        size: Type.Optional(Type.Integer({ default: 5, maximum: 9 })),
      },
      { additionalProperties: false },
    ),
  );

  it('fills defaults and answers the value itself', () => {
    expect(sut({ items: [] })).toEqual({ ok: true, value: { items: [], size: 5 } });
  });

  it('spells paths as the API does, under the given base, with the schema’s own sentence', () => {
    expect(sut({ items: [{ n: 1 }, { n: 1.5 }] }, 'requests[2]')).toEqual({
      ok: false,
      errors: [{ path: 'requests[2].items[1].n', message: 'n must be whole' }],
    });
  });

  it('falls back to a generic sentence naming the field, and unescapes JSON Pointer names', () => {
    expect(sut({ items: [], 'a/b': 1, size: 10 })).toEqual({
      ok: false,
      errors: [
        { path: 'a/b', message: 'a/b must be string' },
        { path: 'size', message: 'size must be <= 9' },
      ],
    });
  });

  it("tells a failed union by the union's own sentence, not by each branch", () => {
    const union = compileSchemaCheck(
      Type.Object({
        g: Type.Union([Type.Literal('hour'), Type.Literal('day')], { errorMessage: 'g must be hour or day' }),
      }),
    );

    expect(union({ g: 'week' })).toEqual({
      ok: false,
      errors: [{ path: 'g', message: 'g must be hour or day' }],
    });
    expect(union({ g: 'day' })).toEqual({ ok: true, value: { g: 'day' } });
  });

  it('coerces nothing: a numeric string is not an integer', () => {
    expect(sut({ items: [{ n: '1' }] }).ok).toBe(false);
  });
});
