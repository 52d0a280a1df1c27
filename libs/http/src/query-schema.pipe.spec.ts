import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@tally/errors';
import { QuerySchemaPipe } from './query-schema.pipe';

describe(QuerySchemaPipe.name, () => {
  const sut = new QuerySchemaPipe(
    Type.Object(
      {
        first: Type.String({ errorMessage: 'first must be a string' }),
        second: Type.Optional(
          Type.String({ minLength: 2, pattern: '^b', errorMessage: 'second must start with b, 2+ long' }),
        ),
      },
      { additionalProperties: false },
    ),
  );
  const refusal = (query: unknown): unknown => {
    try {
      sut.transform(query);
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).getStatus()).toBe(400);
      return (e as ApiError).getResponse();
    }
    throw new Error('accepted');
  };

  it('answers the query itself when it fits, an absent query as an empty one', () => {
    expect(sut.transform({ first: 'a', second: 'bb' })).toEqual({ first: 'a', second: 'bb' });
    expect(refusal(undefined)).toMatchObject({ errors: [{ path: 'first', message: 'first is required' }] });
  });

  it("lists unknown names as they came, then the schema's order, each problem once", () => {
    // given: `second` breaks two rules that share one sentence, and comes before `first`
    const query = { second: 'a', zeta: '1', first: ['x', 'y'], alpha: '2' };

    expect(refusal(query)).toEqual({
      code: 'request.invalid',
      message: 'the request is invalid',
      errors: [
        { path: 'zeta', message: 'property zeta should not exist' },
        { path: 'alpha', message: 'property alpha should not exist' },
        { path: 'first', message: 'first must be a string' },
        { path: 'second', message: 'second must start with b, 2+ long' },
      ],
    });
  });
});
