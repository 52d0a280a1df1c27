import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES, renderOpenApiMarkdown } from '@tally/http';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { projectorDocument } from './projector.openapi';

type Json = Record<string, unknown>;
const sut = projectorDocument();
const paths = sut.paths as Record<string, Record<string, Json>>;
const operations = Object.entries(paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ path, method, op })),
);

describe(projectorDocument.name, () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();

    const result = await validator.validate(structuredClone(sut));

    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
  });

  it('has every endpoint of the projector', () => {
    expect(operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`)).toEqual([
      'GET /v1/usage',
      'GET /v1/top-keys',
      'GET /v1/audit',
      'POST /v1/tokens:reload',
      'GET /healthz',
      'GET /readyz',
      'GET /metrics',
      'GET /openapi.json',
    ]);
  });

  it('lists the whole error vocabulary with its statuses', () => {
    const published = sut['x-tally-error-codes'] as Record<string, { statuses: number[] }>;

    expect(Object.keys(published)).toEqual(Object.keys(ERROR_CODES));
    for (const [code, entry] of Object.entries(ERROR_CODES))
      expect(published[code].statuses).toEqual(entry.statuses);
  });

  it('documents each error code of an operation only at a status the code is sent with', () => {
    for (const { op } of operations) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const code of codesIn(response))
          expect(ERROR_CODES[code as keyof typeof ERROR_CODES].statuses, `${code} at ${status}`).toContain(
            Number(status),
          );
      }
    }
  });

  it("documents the queries' parameters, their refusals and the bearer token", () => {
    const usage = paths['/v1/usage'].get;
    const parameters = usage.parameters as { name: string; in: string; required: boolean }[];

    expect(parameters.map((p) => p.name)).toEqual([
      'tenant',
      'policy',
      'key',
      'granularity',
      'from',
      'to',
      'cursor',
      'limit',
      'namespace',
    ]);
    expect(parameters.filter((p) => p.required).map((p) => p.name)).toEqual(['tenant']);
    expect(parameters.every((p) => p.in === 'query')).toBe(true);
    const responses = usage.responses as Record<string, Json>;
    expect(codesIn(responses['400'])).toContain('request.invalid');
    expect(codesIn(responses['404'])).toContain('namespace.not_found');
    expect(codesIn(responses['500'])).toContain('projection.corrupt');
    expect(codesIn(responses['401'])).toEqual(['auth.missing', 'auth.invalid']);
    expect(usage.security).toEqual([{ bearer: [] }]);
    expect(paths['/healthz'].get.security).toEqual([]);
    expect(paths['/openapi.json'].get.security).toEqual([]);
  });

  it('names its components apart from the decision API', () => {
    const names = Object.keys((sut.components as Json).schemas as Json);

    expect(names.filter((n) => n.startsWith('Projector')).sort()).toEqual([
      'ProjectorAudit',
      'ProjectorTopKeys',
      'ProjectorTotals',
      'ProjectorUsage',
    ]);
  });

  it('compiles every schema with a JSON Schema 2020-12 validator', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...sut, $id: 'openapi.json' });

    for (const name of Object.keys((sut.components as Json).schemas as Json))
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`), name).not.toThrow();
  });

  it('is rendered in docs/projector-api.md (run `npm run build && node scripts/api-reference.mjs` when this fails)', () => {
    const rendered = renderOpenApiMarkdown(sut);

    expect(readFileSync(join(__dirname, '../../../docs/projector-api.md'), 'utf8')).toBe(rendered);
  });
});

function codesIn(response: Json): string[] {
  const text = JSON.stringify(response.content ?? {});
  return [...text.matchAll(/"enum":\[([^\]]*)\]/g)].flatMap((m) => JSON.parse(`[${m[1]}]`) as string[]);
}
