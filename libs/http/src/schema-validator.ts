import type { Static, TSchema } from '@sinclair/typebox';
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import type { FieldError } from '@tally/errors';
import { type Validated } from './validation';

/**
 * Request bodies judged by their published JSON Schema (@tally/api-contract), compiled once by ajv
 * into plain JavaScript: the same definition the OpenAPI document shows is the one that refuses, at
 * hot-path speed (see decision-body.bench in apps/decision-api). Every problem is listed (`allErrors`),
 * nothing is coerced (`"3"` is not a cost), unknown fields are refused by the schemas'
 * `additionalProperties: false` — `toString` and `constructor` included — and absent fields get the
 * schema's `default`.
 */
const ajv = new Ajv2020({
  allErrors: true,
  useDefaults: true,
  coerceTypes: false,
  verbose: true,
  strict: true,
});
// The sentence a caller reads for a failed rule: an annotation of the schema, not a rule itself.
ajv.addKeyword({ keyword: 'errorMessage', schemaType: ['string', 'object'] });

/** A compiled check: `path` prefixes every error's path (`requests[3]`). */
export type SchemaCheck<T> = (value: unknown, path?: string) => Validated<T>;

export function compileSchemaCheck<S extends TSchema>(schema: S): SchemaCheck<Static<S>> {
  const validate = ajv.compile<Static<S>>(schema);
  return (value, path = '') => {
    if (validate(value)) return { ok: true, value };
    return { ok: false, errors: withoutBranches(validate.errors ?? []).map((e) => fieldErrorOf(e, path)) };
  };
}

/**
 * A failed `anyOf` (a union, say of literals) is one problem, told by the union's own sentence: the
 * errors of its branches, each a rule the value was never meant to meet, are dropped.
 */
function withoutBranches(errors: readonly ErrorObject[]): readonly ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
  if (unions.length === 0) return errors;
  return errors.filter((e) => !unions.some((union) => e.schemaPath.startsWith(union)));
}

function fieldErrorOf(error: ErrorObject, base: string): FieldError {
  const path = pathOf(base, error.instancePath);
  switch (error.keyword) {
    case 'required': {
      const name = (error.params as { missingProperty: string }).missingProperty;
      return { path: at(path, name), message: `${name} is required` };
    }
    case 'additionalProperties': {
      const name = (error.params as { additionalProperty: string }).additionalProperty;
      return { path: at(path, name), message: `property ${name} should not exist` };
    }
    default:
      return { path, message: messageOf(error) };
  }
}

function messageOf(error: ErrorObject): string {
  const own = (error.parentSchema as { errorMessage?: string | Record<string, string> } | undefined)
    ?.errorMessage;
  if (typeof own === 'string') return own;
  if (own?.[error.keyword] !== undefined) return own[error.keyword];
  const subject = propertyOf(error.instancePath.split('/').pop() ?? '');
  return subject ? `${subject} ${error.message ?? 'is invalid'}` : (error.message ?? 'is invalid');
}

/** JSON Pointer (`/requests/3/cost`) to the API's paths (`requests[3].cost`), under `base`. */
function pathOf(base: string, pointer: string): string {
  let path = base;
  if (pointer === '') return path;
  for (const raw of pointer.slice(1).split('/')) path = at(path, propertyOf(raw));
  return path;
}

/** One JSON Pointer token back to the property name. */
function propertyOf(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function at(parent: string, key: string): string {
  if (/^\d+$/.test(key)) return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}
