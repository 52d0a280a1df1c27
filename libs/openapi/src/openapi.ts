import type { TObject, TSchema } from '@sinclair/typebox';
import { ErrorBodySchema } from '@tally/api-contract';
import { ERROR_CODES, type ErrorCode } from '@tally/errors';

/**
 * A small OpenAPI 3.1 builder for the Tally HTTP APIs: an app lists its operations with the
 * contract's TypeBox schemas and the error codes each may answer; the document (JSON Schema
 * 2020-12 dialect, every `$id`'d schema a component) is built from them at boot. The statuses of
 * error codes come from ERROR_CODES, so a code can only be documented with the status it is sent with.
 */

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** A response at one status: schemas (several = any of them) and/or error codes, and headers by name. */
export interface ResponseSpec {
  readonly description: string;
  readonly schemas?: readonly TSchema[];
  /** Error codes sent at this status with `{code, message, errors?}` (their status must be this one). */
  readonly errorCodes?: readonly ErrorCode[];
  /** `text/plain` bodies (metrics): the schema is a string. */
  readonly contentType?: string;
  /** Names of `OpenApiSpec.headers` this response carries. */
  readonly headers?: readonly string[];
}

export interface OperationSpec {
  readonly method: HttpMethod;
  /** OpenAPI path template: `/v1/policies/{name}/state`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** `public`, or the bearer token's role the call needs (`decide`, `admin`). */
  readonly access: string;
  readonly parameters?: readonly Record<string, unknown>[];
  /** The query string's schema (@tally/api-contract): each property a query parameter, after `parameters`. */
  readonly query?: TObject;
  readonly requestBody?: TSchema;
  /** The body may be left out (the operation then reads it as `{}`). Default: required. */
  readonly requestBodyOptional?: boolean;
  /** Responses by status; error codes of other statuses go in `errorCodes`. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Error codes answered as a bare error body, grouped by their status. */
  readonly errorCodes?: readonly ErrorCode[];
}

export interface OpenApiSpec {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  readonly operations: readonly OperationSpec[];
  /** Response headers by name: what each says, and its schema. */
  readonly headers?: Readonly<Record<string, { readonly description: string; readonly schema: object }>>;
  /** Error codes every operation may meet (transport, overload, bugs). */
  readonly commonErrorCodes?: readonly ErrorCode[];
}

type Json = Record<string, unknown>;

export function buildOpenApi(spec: OpenApiSpec): Json {
  const components = new Map<string, Json>();
  const ref = (schema: TSchema | object): Json => componentize(schema, components);
  const errorBody = ref(ErrorBodySchema);
  const paths: Record<string, Record<string, Json>> = {};
  for (const op of spec.operations) {
    const responses: Record<string, Json> = {};
    const grouped = groupByStatus([...(op.errorCodes ?? []), ...(spec.commonErrorCodes ?? [])]);
    const statuses = new Set([...Object.keys(op.responses).map(Number), ...grouped.keys()]);
    for (const status of [...statuses].sort((a, b) => a - b)) {
      const own = op.responses[status] as ResponseSpec | undefined;
      const codes = [...new Set([...(own?.errorCodes ?? []), ...(grouped.get(status) ?? [])])];
      for (const code of own?.errorCodes ?? []) assertStatus(code, status, op);
      const schemas = (own?.schemas ?? []).map(ref);
      if (codes.length > 0) schemas.push(errorWith(errorBody, codes));
      const response: Json = { description: describe(own?.description, codes) };
      if (schemas.length > 0) {
        const schema = schemas.length === 1 ? schemas[0] : { anyOf: schemas };
        response.content = { [own?.contentType ?? 'application/json']: { schema } };
      }
      if (own?.headers?.length) {
        response.headers = Object.fromEntries(
          own.headers.map((name) => [name, { $ref: `#/components/headers/${name}` }]),
        );
      }
      responses[String(status)] = response;
    }
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description && { description: op.description }),
      security: op.access === 'public' ? [] : [{ bearer: [] }],
      'x-tally-access': op.access,
      ...((op.parameters ?? op.query) && {
        parameters: [...(op.parameters ?? []), ...(op.query ? queryParameters(op.query, ref) : [])],
      }),
      ...(op.requestBody && {
        requestBody: {
          required: op.requestBodyOptional !== true,
          content: { 'application/json': { schema: ref(op.requestBody) } },
        },
      }),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: spec.title, version: spec.version, description: spec.description },
    paths,
    components: {
      schemas: Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))),
      headers: Object.fromEntries(
        Object.entries(spec.headers ?? {}).map(([name, h]) => [
          name,
          { description: h.description, schema: h.schema },
        ]),
      ),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer <token>`: a token of `TALLY_API_TOKENS` or the tokens file.',
        },
      },
    },
    // The whole error vocabulary (libs/errors error-codes.ts), for tools and people: code → statuses.
    'x-tally-error-codes': Object.fromEntries(
      Object.entries(ERROR_CODES).map(([code, e]) => [code, { statuses: e.statuses, meaning: e.meaning }]),
    ),
  };
}

function groupByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const grouped = new Map<number, ErrorCode[]>();
  for (const code of codes)
    for (const status of ERROR_CODES[code].statuses)
      grouped.set(status, [...(grouped.get(status) ?? []), code]);
  return grouped;
}

function assertStatus(code: ErrorCode, status: number, op: OperationSpec): void {
  if (!(ERROR_CODES[code].statuses as readonly number[]).includes(status))
    throw new Error(`${op.operationId}: ${code} is never sent with ${status}`);
}

/** The error body whose `code` is one of these. */
function errorWith(errorBody: Json, codes: readonly string[]): Json {
  return { allOf: [errorBody, { properties: { code: { enum: codes } } }] };
}

function describe(text: string | undefined, codes: readonly string[]): string {
  const list = codes.map((c) => `\`${c}\``).join(', ');
  if (!text) return list;
  return codes.length > 0 ? `${text}. Error codes: ${list}` : text;
}

/** A query schema's properties as OpenAPI query parameters (the schema stays the one definition). */
function queryParameters(schema: TObject, ref: (schema: object) => Json): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string } & Json;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description && { description }),
      schema: ref(rest),
    };
  });
}

/**
 * A plain JSON copy of a TypeBox schema in which every `$id`'d schema is a `$ref` to its component,
 * and the validator-only `errorMessage` annotations are dropped.
 */
function componentize(schema: object, components: Map<string, Json>): Json {
  const node = schema as Json;
  const id = typeof node.$id === 'string' ? node.$id : undefined;
  if (id !== undefined) {
    if (!components.has(id)) {
      components.set(id, {}); // reserve first: a schema may refer to itself
      const { $id: _id, ...rest } = node;
      components.set(id, copy(rest, components));
    }
    return { $ref: `#/components/schemas/${id}` };
  }
  return copy(node, components);
}

function copy(node: Json, components: Map<string, Json>): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'errorMessage') continue;
    out[key] = clone(value, components);
  }
  return out;
}

function clone(value: unknown, components: Map<string, Json>): unknown {
  if (Array.isArray(value)) return value.map((v) => clone(v, components));
  if (typeof value === 'object' && value !== null) return componentize(value, components);
  return value;
}
