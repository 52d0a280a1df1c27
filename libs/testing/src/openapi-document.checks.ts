import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020';
import { expect, it } from 'vitest';

type Json = Record<string, unknown>;

/** The repository root: this file is libs/testing/src/openapi-document.checks.ts. */
const ROOT = resolve(__dirname, '../../..');

/** What @tally/http serves in every app (@tally/openapi `serviceOperations`), listed after the app's own. */
const SERVICE_ENDPOINTS = [
  'POST /v1/tokens:reload',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /openapi.json',
];

export interface OpenApiDocumentExpectations {
  /** `decision API`, `projector`: as the endpoints check names it. */
  readonly service: string;
  /** The app's own endpoints (`GET /v1/usage`), in the document's order; the service ones follow. */
  readonly endpoints: readonly string[];
  /** The error vocabulary (@tally/errors ERROR_CODES, passed in: this lib does not import it). */
  readonly errorCodes: Readonly<Record<string, { readonly statuses: readonly number[] }>>;
  /** The rendered reference for people (`docs/api.md`) and the renderer that must reproduce it. */
  readonly reference: { readonly file: string; readonly render: (document: Json) => string };
}

/**
 * What every app's published OpenAPI document must be, as `it` cases of the caller's `describe`:
 * valid OpenAPI 3.1, exactly the expected endpoints, the whole error vocabulary with its statuses,
 * each code only at a status it is sent with, no validator-only annotation, schemas a JSON Schema
 * 2020-12 validator compiles, and the committed reference page up to date.
 */
export function itIsAPublishedOpenApiDocument(sut: Json, expected: OpenApiDocumentExpectations): void {
  const operations = Object.entries(sut.paths as Record<string, Record<string, Json>>).flatMap(
    ([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();

    const result = await validator.validate(structuredClone(sut));

    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
  });

  it(`has every endpoint of the ${expected.service}`, () => {
    expect(operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`)).toEqual([
      ...expected.endpoints,
      ...SERVICE_ENDPOINTS,
    ]);
  });

  it('lists the whole error vocabulary with its statuses', () => {
    const published = sut['x-tally-error-codes'] as Record<string, { statuses: number[] }>;

    expect(Object.keys(published)).toEqual(Object.keys(expected.errorCodes));
    for (const [code, entry] of Object.entries(expected.errorCodes))
      expect(published[code].statuses).toEqual(entry.statuses);
  });

  it('documents each error code of an operation only at a status the code is sent with', () => {
    for (const { op } of operations) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const code of errorCodesIn(response))
          expect(expected.errorCodes[code].statuses, `${code} at ${status}`).toContain(Number(status));
      }
    }
  });

  it("publishes no validator-only annotation (the schemas' `errorMessage`)", () => {
    expect(JSON.stringify(sut)).not.toContain('"errorMessage"');
  });

  it('compiles every schema with a JSON Schema 2020-12 validator', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...sut, $id: 'openapi.json' });

    for (const name of Object.keys((sut.components as Json).schemas as Json))
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`), name).not.toThrow();
  });

  it(`is rendered in ${expected.reference.file} (run \`npm run build && node scripts/api-reference.mjs\` when this fails)`, () => {
    const rendered = expected.reference.render(sut);

    expect(readFileSync(resolve(ROOT, expected.reference.file), 'utf8')).toBe(rendered);
  });
}

/** The error codes a documented response lists (the `enum`s of its error bodies). */
export function errorCodesIn(response: Json): string[] {
  const text = JSON.stringify(response.content ?? {});
  return [...text.matchAll(/"enum":\[([^\]]*)\]/g)].flatMap((m) => JSON.parse(`[${m[1]}]`) as string[]);
}
