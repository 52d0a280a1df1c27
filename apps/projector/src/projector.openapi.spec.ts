import { ERROR_CODES } from '@tally/errors';
import { renderOpenApiMarkdown } from '@tally/openapi';
import { errorCodesIn, itIsAPublishedOpenApiDocument } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { projectorDocument } from './projector.openapi';

type Json = Record<string, unknown>;
const sut = projectorDocument();
const paths = sut.paths as Record<string, Record<string, Json>>;

describe(projectorDocument.name, () => {
  itIsAPublishedOpenApiDocument(sut, {
    service: 'projector',
    endpoints: [
      'GET /v1/usage',
      'GET /v1/top-keys',
      'GET /v1/audit',
      'GET /v1/session',
      'GET /v1/overview',
      'GET /v1/pipeline',
      'GET /v1/namespaces',
      'POST /v1/namespaces:switch',
      'POST /v1/policies:simulate',
      'GET /v1/decision-api/policies',
      'GET /v1/decision-api/policy-reloads',
      'GET /v1/decision-api/overrides',
      'PUT /v1/decision-api/overrides/{policy}/{key}',
      'DELETE /v1/decision-api/overrides/{policy}/{key}',
    ],
    errorCodes: ERROR_CODES,
    reference: { file: 'docs/projector-api.md', render: renderOpenApiMarkdown },
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
    expect(errorCodesIn(responses['400'])).toContain('request.invalid');
    expect(errorCodesIn(responses['404'])).toContain('namespace.not_found');
    expect(errorCodesIn(responses['500'])).toContain('projection.corrupt');
    expect(errorCodesIn(responses['401'])).toEqual(['auth.missing', 'auth.invalid']);
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
});
