import { type PipeTransform } from '@nestjs/common';
import type { Static, TObject } from '@sinclair/typebox';
import { ApiError, type FieldError } from '@tally/errors';
import { compileSchemaCheck, type SchemaCheck } from './schema-validator';

/**
 * A route's query string judged by its published schema (@tally/api-contract), compiled once:
 * `@Query(new QuerySchemaPipe(UsageQuerySchema))`. Fastify's parser hands over one string per
 * parameter and an array for a repeated one, which the schema's `type: string` refuses. Nothing is
 * coerced; unknown parameters are refused (`additionalProperties: false`), whatever their name.
 *
 * A refusal is 400 `request.invalid` listing every problem once, in a stable order: unknown
 * parameters as they came, then the schema's parameters in the schema's order.
 */
export class QuerySchemaPipe<S extends TObject> implements PipeTransform<unknown, Static<S>> {
  private readonly check: SchemaCheck<Static<S>>;
  private readonly rank: ReadonlyMap<string, number>;

  constructor(schema: S) {
    this.check = compileSchemaCheck(schema);
    this.rank = new Map(Object.keys(schema.properties).map((name, i) => [name, i]));
  }

  transform(query: unknown): Static<S> {
    const checked = this.check(query ?? {});
    if (checked.ok) return checked.value;
    throw new ApiError(400, 'request.invalid', 'the request is invalid', this.ordered(checked.errors));
  }

  private ordered(errors: readonly FieldError[]): FieldError[] {
    const seen = new Set<string>();
    const once = errors.filter((e) => {
      const id = `${e.path}\n${e.message}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    // Stable: equal ranks keep the validator's order (unknown names in the order they came).
    return once.sort((a, b) => (this.rank.get(a.path) ?? -1) - (this.rank.get(b.path) ?? -1));
  }
}
