import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

type Json = Record<string, unknown>;

/**
 * Real answers checked against the API's published OpenAPI document (as served at /openapi.json):
 * the status must be one the operation documents, and the body must validate against the schema
 * documented for that status. One compiled validator per (method, path, status).
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction | null>();

  private constructor(private readonly document: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: 'openapi.json' });
  }

  /** The document the API itself serves. */
  static async fetch(baseUrl: string): Promise<OpenApiContract> {
    const res = await fetch(`${baseUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /openapi.json: ${res.status}`);
    return new OpenApiContract((await res.json()) as Json);
  }

  /** The documented path template a request path falls under (`/v1/policies/p1/state?x` → `…/{name}/state`). */
  templateOf(method: string, path: string): string | undefined {
    const bare = path.split('?')[0];
    const paths = this.document.paths as Record<string, Record<string, unknown>>;
    return Object.keys(paths).find((template) => {
      if (paths[template][method.toLowerCase()] === undefined) return false;
      const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^/}]+\}/g, '[^/]+');
      return new RegExp(`^${pattern}$`).test(bare);
    });
  }

  /** Problems of one answer: an undocumented status, or a body outside the status's schema. */
  problems(method: string, template: string, status: number, body: unknown): string[] {
    const key = `${method.toLowerCase()} ${template} ${status}`;
    if (!this.compiled.has(key)) this.compiled.set(key, this.compile(method.toLowerCase(), template, status));
    const validate = this.compiled.get(key);
    if (validate === undefined || validate === null) return [`${key}: status not documented`];
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${key}: ${e.instancePath || '(body)'} ${e.message ?? ''}`);
  }

  /** Asserts that the answer conforms; `path` is the operation's template (`/v1/policies/{name}/state`). */
  expectConforms(method: string, template: string, res: { status: number; body: unknown }): void {
    expect(this.problems(method, template, res.status, res.body), JSON.stringify(res.body)).toEqual([]);
  }

  private compile(method: string, path: string, status: number): ValidateFunction | null {
    const operation = (this.document.paths as Record<string, Record<string, Json>>)[path]?.[method];
    const response = (operation?.responses as Record<string, Json> | undefined)?.[String(status)];
    if (!response) return null;
    const content = response.content as Record<string, unknown> | undefined;
    // A response without a body is documented as such: nothing to check in it.
    if (!content) return this.ajv.compile({});
    const mediaType = Object.keys(content)[0];
    const pointer = ['paths', path, method, 'responses', String(status), 'content', mediaType, 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const validate = this.ajv.getSchema(`openapi.json#/${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate;
  }
}
