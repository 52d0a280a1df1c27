import type { TObject, TSchema } from '@sinclair/typebox';

/** One property of an object schema, in the schema's (wire) order. */
export interface SchemaProperty {
  readonly name: string;
  /** Absent is allowed (written by omission, never as `null`). */
  readonly optional: boolean;
  readonly schema: TSchema;
}

/** The properties of an object schema in declaration order: the order every writer follows. */
export function propertiesOf(schema: TObject): SchemaProperty[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => ({
    name,
    optional: !required.has(name),
    schema: property,
  }));
}

/** An object schema with declared properties (a free record such as `selectors` has none). */
function isObjectSchema(schema: TSchema): schema is TObject {
  return schema.type === 'object' && typeof schema.properties === 'object';
}

/**
 * `value` as JSON holding exactly the properties `schema` declares, in its order, at every level
 * (objects and arrays of objects): what `JSON.stringify` writes for an object built in that order.
 * A property the value has but the schema lacks is not written; an absent required one is an error,
 * so a writer can never emit less than the contract.
 */
export function schemaJson(schema: TSchema, value: unknown): string {
  if (isObjectSchema(schema)) return objectJson(propertiesOf(schema), value as Record<string, unknown>);
  const items = (schema as { items?: TSchema }).items;
  if (schema.type === 'array' && items !== undefined && isObjectSchema(items)) {
    return `[${(value as unknown[]).map((item) => schemaJson(items, item)).join(',')}]`;
  }
  return JSON.stringify(value);
}

/** The members of an object (no braces) for `properties`, or '' when none is present. */
export function membersJson(properties: readonly SchemaProperty[], value: Record<string, unknown>): string {
  let json = '';
  for (const property of properties) {
    const member = value[property.name];
    if (member === undefined) {
      if (property.optional) continue;
      throw new Error(`missing required property ${property.name}`);
    }
    json += `${json === '' ? '' : ','}${JSON.stringify(property.name)}:${schemaJson(property.schema, member)}`;
  }
  return json;
}

function objectJson(properties: readonly SchemaProperty[], value: Record<string, unknown>): string {
  return `{${membersJson(properties, value)}}`;
}
