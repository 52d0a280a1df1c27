import { ERROR_CODES } from '@tally/errors';
import { renderOpenApiMarkdown } from '@tally/openapi';
import { itIsAPublishedOpenApiDocument } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { decisionApiDocument } from './decision-api.openapi';

type Json = Record<string, unknown>;
const sut = decisionApiDocument();

describe(decisionApiDocument.name, () => {
  itIsAPublishedOpenApiDocument(sut, {
    service: 'decision API',
    endpoints: [
      'POST /v1/decisions',
      'POST /v1/decisions:batch',
      'POST /v1/leases/{id}:release',
      'POST /v1/leases/{id}:extend',
      'GET /v1/policies',
      'GET /v1/policy-reloads',
      'GET /v1/policies/{name}/state',
      'POST /v1/policies:reload',
      'GET /v1/overrides',
      'GET /v1/overrides/{policy}/{key}',
      'PUT /v1/overrides/{policy}/{key}',
      'DELETE /v1/overrides/{policy}/{key}',
    ],
    errorCodes: ERROR_CODES,
    reference: { file: 'docs/api.md', render: renderOpenApiMarkdown },
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
});
