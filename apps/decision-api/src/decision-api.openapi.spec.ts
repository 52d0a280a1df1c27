import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES, renderOpenApiMarkdown } from '@tally/http';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { decisionApiDocument } from './decision-api.openapi';

type Json = Record<string, unknown>;
const sut = decisionApiDocument();
const operations = Object.entries(sut.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ path, method, op })),
);

describe(decisionApiDocument.name, () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();

    const result = await validator.validate(structuredClone(sut));

    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
  });

  it('has every endpoint of the decision API', () => {
    expect(operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`)).toEqual([
      'POST /v1/decisions',
      'POST /v1/decisions:batch',
      'GET /v1/policies',
      'GET /v1/policies/{name}/state',
      'POST /v1/policies:reload',
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

  it('names the rate-limit headers on the decision and the bearer token on protected routes', () => {
    const decide = (sut.paths as Json)['/v1/decisions'] as { post: Json };
    const responses = decide.post.responses as Record<string, { headers?: Json }>;

    expect(Object.keys(responses['429'].headers ?? {})).toEqual(
      expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']),
    );
    expect(decide.post.security).toEqual([{ bearer: [] }]);
    expect(((sut.paths as Json)['/healthz'] as { get: Json }).get.security).toEqual([]);
  });

  it('compiles every schema with a JSON Schema 2020-12 validator', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...sut, $id: 'openapi.json' });

    for (const name of Object.keys((sut.components as Json).schemas as Json))
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`), name).not.toThrow();
  });

  it('is rendered in docs/api.md (run `npm run build && node scripts/api-reference.mjs` when this fails)', () => {
    const rendered = renderOpenApiMarkdown(sut);

    expect(readFileSync(join(__dirname, '../../../docs/api.md'), 'utf8')).toBe(rendered);
  });
});

function codesIn(response: Json): string[] {
  const text = JSON.stringify(response.content ?? {});
  return [...text.matchAll(/"enum":\[([^\]]*)\]/g)].flatMap((m) => JSON.parse(`[${m[1]}]`) as string[]);
}
