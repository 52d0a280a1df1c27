import { Ajv, type ErrorObject, type Schema, type ValidateFunction } from 'ajv';
import { DecisionEventV1 } from './decision-event.v1';
import { DecisionEventV2 } from './decision-event.v2';
import { ULID_PATTERN } from './event-parts.v1';
import { LeaseEventV1 } from './lease-event.v1';
import { OverrideEventV1 } from './override-event.v1';
import { UsageEventV1 } from './usage-event.v1';

/**
 * RFC 3339 §5.6 `date-time` as the regular expression events were always validated with
 * (class-validator's isRFC3339, which the spec holds this to): the same verdict on every timestamp
 * ever written. A RegExp, not a function, so ajv inlines one `test`.
 */
export const RFC3339 =
  /^[0-9]{4}-(0[1-9]|1[0-2])-([12]\d|0[1-9]|3[01])[ tT]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([zZ]|[-+]([01][0-9]|2[0-3]):[0-5][0-9])$/;

/**
 * The consumers' validators, compiled by ajv from the same TypeBox schemas the types and the
 * published JSON Schema documents come from: one definition, no hand copy of its rules. Two
 * compilations of each schema: the fast one decides (first failure only, no error detail: the
 * projector's hot path), the verbose one, run only for a rejected event, lists every problem.
 */
function compiler(explain: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: explain,
    verbose: explain,
    strict: true,
    strictRequired: false,
    unicodeRegExp: false,
    messages: explain,
  });
  // strictRequired off: `then: { required: ['reason'] }` names a property declared beside it.
  // unicodeRegExp off: the only pattern (the ULID) is ASCII, and V8 runs it faster without the u flag.
  ajv.addFormat('date-time', RFC3339);
  return ajv;
}

const fast = compiler(false);
const verbose = compiler(true);

export interface EventValidator {
  /** True when the plain value is a valid event of this type. */
  readonly accepts: ValidateFunction;
  /** Every problem of an invalid value, as `path: field message` (the dead-letter reason). */
  readonly problems: (value: unknown) => string[];
}

function validator(schema: Schema): EventValidator {
  const accepts = fast.compile(schema);
  const explain = verbose.compile(schema);
  return {
    accepts,
    problems: (value) => {
      explain(value);
      return [...new Set((explain.errors ?? []).flatMap((error) => describe(error, schema)))];
    },
  };
}

export const usageEventValidator = validator(UsageEventV1);
export const decisionEventValidator = validator(DecisionEventV1);
export const decisionV2EventValidator = validator(DecisionEventV2);
export const leaseEventValidator = validator(LeaseEventV1);
export const overrideEventValidator = validator(OverrideEventV1);

/** `/data/policies/0/windows/1` → `data.policies[0].windows[1]`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path === '' ? s : `${path}.${s}`), '');
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}

function lastName(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

/** One reason per failed rule, worded as the class-validator DTOs worded it (operators grep these). */
function describe(error: ErrorObject, root: Schema): string[] {
  const parent = error.parentSchema;
  const path = pathOf(error.instancePath);
  switch (error.keyword) {
    case 'if':
      return []; // its `then` failure is the one with the detail
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      // The object's own schema, not the keyword's: a `then: { required }` declares no properties.
      const properties = (schemaAt(root, error.instancePath).properties ?? {}) as Record<
        string,
        Record<string, unknown>
      >;
      return [`${join(path, missing)}: ${missing} ${expectation(properties[missing] ?? {})}`];
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return [`${path}: ${lastName(path)} must not be less than ${String(parent?.minimum)}`];
    case 'maximum':
      return [`${path}: ${lastName(path)} must not be greater than ${String(parent?.maximum)}`];
    default:
      // A value inside a record (selectors, attributes) is not a string: the record is at fault.
      if (error.schemaPath.includes('/additionalProperties/')) {
        const record = path.slice(0, path.lastIndexOf('.'));
        return [`${record}: ${lastName(record)} must be an object of string values`];
      }
      if (error.keyword === 'type' && parent?.type === 'string')
        return [`${path}: ${lastName(path)} must be a string`];
      return [`${path}: ${lastName(path)} ${expectation(parent ?? {})}`];
  }
}

/** The schema of the value at a JSON pointer (objects by `properties`, arrays by `items`). */
function schemaAt(root: Schema, pointer: string): Record<string, unknown> {
  let schema = root as Record<string, unknown>;
  for (const segment of pointer.split('/').slice(1)) {
    const next = /^\d+$/.test(segment)
      ? schema.items
      : (schema.properties as Record<string, unknown> | undefined)?.[segment];
    if (typeof next !== 'object' || next === null) return {};
    schema = next as Record<string, unknown>;
  }
  return schema;
}

/** What a field's schema asks for, in words. */
function expectation(schema: Record<string, unknown>): string {
  if (schema.pattern === ULID_PATTERN.source) return 'must be a ULID';
  if (schema.format === 'date-time') return 'must be RFC 3339 date';
  if ('const' in schema) return `must be equal to ${String(schema.const)}`;
  if (Array.isArray(schema.enum)) return `must be one of the following values: ${schema.enum.join(', ')}`;
  if (typeof schema.additionalProperties === 'object') return 'must be an object of string values';
  switch (schema.type) {
    case 'integer':
      return 'must be an integer number';
    case 'number':
      return 'must be a number conforming to the specified constraints';
    case 'boolean':
      return 'must be a boolean value';
    case 'array':
      return 'must be an array';
    case 'object':
      return 'must be an object';
    case 'string':
      return schema.minLength === 1 ? 'should not be empty' : 'must be a string';
    default:
      return 'is invalid';
  }
}
