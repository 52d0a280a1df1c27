/**
 * Bad input over real HTTP: every malformed, mistyped, oversized or hostile request is a 4xx with a
 * stable code — never a 500 — and consumes nothing, checked against the real Redis counters after
 * the whole table has run.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import { CALLER_TOKEN, DecisionApiHarness, type DecisionBody } from './support/decision-api.harness';

// Large enough for a batch of 1001 small requests, so that the batch is refused for its length.
const BODY_LIMIT = 131_072;
const run = uniqueName('e2e-bad');
const POLICY = `${run}-p`;
const tenant = uniqueName('acme');
const selectors = { tenant, principal: 'svc-1' };

let sut: DecisionApiHarness;

beforeAll(async () => {
  sut = await DecisionApiHarness.start({
    redisUrl: inject('redisUrl'),
    // every answer below is also checked against the served OpenAPI document
    contract: true,
    env: { TALLY_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
    policies: `
policies:
  - name: ${POLICY}
    key: [tenant, principal]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }
`,
  });
});
afterAll(async () => {
  await sut.close();
});

interface BadCase {
  readonly name: string;
  readonly raw: string;
  readonly contentType?: string;
  readonly status: number;
  readonly code: string;
  /** The deny reason the body must carry (selector refusals), else absent or null. */
  readonly reason?: string;
}

const json = (body: unknown): string => JSON.stringify(body);
const withSelectors = (extra: Record<string, unknown>): string => json({ selectors, ...extra });

const CASES: readonly BadCase[] = [
  { name: 'malformed JSON', raw: '{"selectors": {', status: 400, code: 'request.malformed_json' },
  { name: 'an empty JSON body', raw: '', status: 400, code: 'request.malformed_json' },
  { name: 'a whitespace-only JSON body', raw: '  \n', status: 400, code: 'request.malformed_json' },
  {
    name: 'prototype poisoning',
    raw: '{"__proto__": {"x": 1}, "selectors": {}}',
    status: 400,
    code: 'request.malformed_json',
  },
  {
    name: 'text/plain',
    raw: withSelectors({}),
    contentType: 'text/plain',
    status: 415,
    code: 'request.unsupported_media_type',
  },
  {
    name: 'a form',
    raw: 'selectors=x',
    contentType: 'application/x-www-form-urlencoded',
    status: 415,
    code: 'request.unsupported_media_type',
  },
  { name: 'a JSON array', raw: json([{ selectors }]), status: 400, code: 'request.invalid' },
  { name: 'a JSON string', raw: json('selectors'), status: 400, code: 'request.invalid' },
  { name: 'JSON null', raw: 'null', status: 400, code: 'request.invalid' },
  { name: 'no selectors', raw: json({ cost: 1 }), status: 400, code: 'request.invalid' },
  { name: 'selectors a string', raw: json({ selectors: 'acme' }), status: 400, code: 'request.invalid' },
  { name: 'selectors an array', raw: json({ selectors: [tenant] }), status: 400, code: 'request.invalid' },
  {
    name: 'attributes a string',
    raw: withSelectors({ attributes: 'x' }),
    status: 400,
    code: 'request.invalid',
  },
  { name: 'cost "3"', raw: withSelectors({ cost: '3' }), status: 400, code: 'request.invalid' },
  { name: 'cost true', raw: withSelectors({ cost: true }), status: 400, code: 'request.invalid' },
  { name: 'cost null', raw: withSelectors({ cost: null }), status: 400, code: 'request.invalid' },
  { name: 'attributes null', raw: withSelectors({ attributes: null }), status: 400, code: 'request.invalid' },
  {
    name: 'idempotency_key null',
    raw: withSelectors({ idempotency_key: null }),
    status: 400,
    code: 'request.invalid',
  },
  { name: 'negative cost', raw: withSelectors({ cost: -1 }), status: 400, code: 'request.invalid' },
  { name: 'fractional cost', raw: withSelectors({ cost: 1.5 }), status: 400, code: 'request.invalid' },
  {
    name: 'huge cost 1e20',
    raw: '{"selectors":' + json(selectors) + ',"cost":1e20}',
    status: 400,
    code: 'cost.invalid',
  },
  {
    name: 'an unknown field',
    raw: withSelectors({ idempotencykey: 'k' }),
    status: 400,
    code: 'request.invalid',
  },
  {
    name: 'idempotency_key a number',
    raw: withSelectors({ idempotency_key: 7 }),
    status: 400,
    code: 'request.invalid',
  },
  ...(
    [
      ['of 256 characters', 'k'.repeat(256)],
      ['with a space', 'retry 1'],
      ['with a control character', 'k\u0000'],
      ['with a newline', 'k\nk'],
      ['with DEL', 'k\u007f'],
      ['with a lone surrogate', 'k\ud800'],
      ['with another lone surrogate (the pair once collapsed into one key)', 'k\udfff'],
      ['with a non-ASCII letter', 'clé'],
    ] as const
  ).map(([what, key]) => ({
    name: `an idempotency_key ${what}`,
    // JSON.stringify writes a lone surrogate as an escape, exactly what a hostile client sends.
    raw: withSelectors({ idempotency_key: key }),
    status: 400,
    code: 'idempotency_key.invalid',
  })),
  {
    name: 'an empty idempotency_key',
    raw: withSelectors({ idempotency_key: '' }),
    status: 400,
    code: 'idempotency_key.invalid',
  },
  {
    name: 'a body above TALLY_BODY_LIMIT_BYTES',
    raw: withSelectors({ attributes: { pad: 'x'.repeat(BODY_LIMIT) } }),
    status: 413,
    code: 'request.too_large',
  },
  ...(
    [
      ['a selector of 257 bytes', { tenant, principal: 'p'.repeat(257) }],
      ['a selector of 129 two-byte characters (258 bytes)', { tenant, principal: 'é'.repeat(129) }],
      ['a selector with a newline', { tenant, principal: 'svc-1\nadmin' }],
      ['a selector with NUL', { tenant, principal: 'svc-1\u0000' }],
      ['a selector with DEL', { tenant, principal: 'svc\u007f1' }],
      ['a selector with a C1 control', { tenant, principal: 'svc\u00851' }],
      ['a blank selector', { tenant, principal: '   ' }],
      ['a selector that is a number', { tenant, principal: 42 }],
      ['an unknown selector dim', { ...selectors, region: 'eu' }],
    ] as const
  ).map(([name, sel]): BadCase => ({
    name,
    raw: json({ selectors: sel }),
    status: 400,
    code: 'selector.identity_invalid',
    reason: 'selector_identity_invalid',
  })),
  {
    name: 'a lone surrogate in a selector',
    raw: `{"selectors":{"tenant":"${tenant}","principal":"svc\\ud800"}}`,
    status: 400,
    code: 'selector.identity_invalid',
    reason: 'selector_identity_invalid',
  },
  {
    name: 'a control character in an attribute',
    raw: withSelectors({ attributes: { plan: 'pro\tx' } }),
    status: 400,
    code: 'selector.identity_invalid',
    reason: 'selector_identity_invalid',
  },
  {
    name: 'a missing key dim',
    raw: json({ selectors: { tenant } }),
    status: 400,
    code: 'selector.identity_missing',
    reason: 'selector_identity_missing',
  },
];

describe(DecisionApiModule.name, () => {
  describe('bad input to POST /v1/decisions', () => {
    it.each(CASES)('answers $status $code to $name', async (c) => {
      const res = await sut.call<DecisionBody & { message: string }>('POST', '/v1/decisions', {
        raw: c.raw,
        contentType: c.contentType ?? 'application/json',
      });

      expect(res.status).toBe(c.status);
      expect(res.body).toMatchObject({ code: c.code, message: expect.any(String) });
      if (c.reason) expect(res.body).toMatchObject({ allowed: false, reason: c.reason });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      // A refusal never echoes a selector value back (it may be a secret or junk for a log).
      expect(JSON.stringify(res.body)).not.toContain('svc-1');
    });

    it('answers 415 to a body without a content type', async () => {
      const res = await fetch(`${sut.baseUrl}/v1/decisions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CALLER_TOKEN}` },
        body: new Blob([JSON.stringify({ selectors })]),
      });

      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: 'request.unsupported_media_type' });
    });

    it('answers 404 route.not_found to an unknown route, even with a valid body', async () => {
      const res = await sut.call('POST', '/v1/decision', { body: { selectors } });

      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'route.not_found' });
    });
  });

  describe('bad input to POST /v1/decisions:batch', () => {
    it('answers 400 request.invalid to 1001 requests, deciding none', async () => {
      const requests = Array.from({ length: 1001 }, () => ({ selectors, cost: 1 }));

      const res = await sut.call('POST', '/v1/decisions:batch', { body: { requests } });

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'request.invalid',
        errors: [{ path: 'requests', message: 'requests must hold at most 1000 decisions' }],
      });
    });

    it.each([
      ['no requests', {}],
      ['requests not an array', { requests: { selectors } }],
      ['an empty list', { requests: [] }],
      ['an unknown field', { requests: [{ selectors }], dry_run: true }],
    ])('answers 400 request.invalid to %s', async (_name, body) => {
      const res = await sut.call('POST', '/v1/decisions:batch', { body });

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'request.invalid' });
    });

    it('answers each bad item with its own 4xx and decides the others', async () => {
      // given a batch mixing valid items with items bad in shape, in value and in cost
      const batchTenant = uniqueName('acme');
      const good = { selectors: { tenant: batchTenant, principal: 'b' }, cost: 2 };
      const requests = [
        good,
        { selectors: 'acme' },
        { selectors: { tenant: batchTenant, principal: 'b\u0007' } },
        7,
        { ...good, cost: '2' },
        { ...good, extra: 1 },
        { selectors: { tenant: batchTenant } },
        { ...good, cost: 1001 },
        good,
      ];

      // when it is sent
      const res = await sut.call<{ results: (DecisionBody & { status: number; errors?: unknown[] })[] }>(
        'POST',
        '/v1/decisions:batch',
        { body: { requests } },
      );

      // then the call succeeds and each item carries its own answer, in order
      expect(res.status).toBe(200);
      expect(res.body.results.map((r) => [r.status, r.code])).toEqual([
        [200, null],
        [400, 'request.invalid'],
        [400, 'selector.identity_invalid'],
        [400, 'request.invalid'],
        [400, 'request.invalid'],
        [400, 'request.invalid'],
        [400, 'selector.identity_missing'],
        [413, 'cost.too_large'],
        [200, null],
      ]);
      expect(res.body.results[1]).toMatchObject({
        allowed: false,
        errors: [{ path: 'requests[1].selectors' }],
      });
      expect(res.body.results[3]).toMatchObject({
        errors: [{ path: 'requests[3]', message: 'must be an object' }],
      });
      expect(res.body.results[4]).toMatchObject({
        errors: [{ path: 'requests[4].cost', message: 'cost must be a whole number ≥ 0' }],
      });
      expect(res.body.results[5]).toMatchObject({ errors: [{ path: 'requests[5].extra' }] });
      // and only the two valid items were charged
      expect(await sut.remaining(POLICY, good.selectors)).toEqual({ hourly: 996 });
    });
  });

  describe('after the bad-input tables', () => {
    it('has consumed nothing, and still decides', async () => {
      expect(await sut.remaining(POLICY, selectors)).toEqual({ hourly: 1000 });

      const res = await sut.decide({ selectors });

      expect(res.status).toBe(200);
      expect(await sut.remaining(POLICY, selectors)).toEqual({ hourly: 999 });
    });
  });
});
