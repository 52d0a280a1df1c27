import {
  AuditQuerySchema,
  TopKeysQuerySchema,
  UsageQuerySchema,
  type AuditResponse,
  type TopKeysResponse,
  type UsageResponse,
} from '@tally/api-contract';
import type { TObject } from '@sinclair/typebox';
import { ApiError } from '@tally/errors';
import { QuerySchemaPipe } from '@tally/http';
import {
  GRANULARITIES,
  POLICY_KEY,
  POLICY_KEY_MESSAGE,
  type AuditView,
  type TopKeysView,
  type UsageView,
} from '@tally/projections';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Compile time: each body the query code builds is one its published schema accepts (typecheck fails
 * otherwise). The lib keeps its own view types: it does not depend on the contract.
 */
type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;
type Fits<View, Body> = [View] extends [DeepReadonly<Body>] ? true : false;
type Holds<T extends true> = T;
export type ViewsFitTheContract = [
  Holds<Fits<UsageView, UsageResponse>>,
  Holds<Fits<TopKeysView, TopKeysResponse>>,
  Holds<Fits<AuditView, AuditResponse>>,
];

const PIPES = {
  usage: new QuerySchemaPipe(UsageQuerySchema),
  topKeys: new QuerySchemaPipe(TopKeysQuerySchema),
  audit: new QuerySchemaPipe(AuditQuerySchema),
};
type Route = keyof typeof PIPES;

/** Fastify parses the query string (a repeated parameter becomes an array), the route's pipe judges it. */
const server = Fastify();
server.get<{ Params: { route: Route } }>('/:route', (request) => {
  try {
    return { value: PIPES[request.params.route].transform(request.query) };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { status: e.getStatus(), body: e.getResponse() };
  }
});
afterAll(() => server.close());

async function sut(route: Route, query: string): Promise<{ value: unknown } | { errors: unknown }> {
  const answer = (await server.inject(`/${route}?${query}`)).json<
    { value: unknown } | { status: number; body: object }
  >();
  if ('value' in answer) return answer;
  expect(answer.status).toBe(400);
  const { errors, ...rest } = answer.body as { errors: unknown };
  expect(rest).toEqual({ code: 'request.invalid', message: 'the request is invalid' });
  return { errors };
}

const err = (path: string, message: string) => ({ path, message });
const TENANT_LENGTH = err('tenant', 'tenant must be 1 to 256 characters');
const TENANT_REQUIRED = err('tenant', 'tenant is required');
const POLICY_NAME = err('policy', 'policy must be a policy name');
const KEY = err('key', POLICY_KEY_MESSAGE);
const GRANULARITY = err('granularity', 'granularity must be one of minute, hour, day, month');
const NAMESPACE = err('namespace', 'namespace must match [a-z0-9][a-z0-9_-]{0,62}');
const LIMIT = (max: number) => err('limit', `limit must be an integer from 1 to ${max}`);
const unknown = (name: string) => err(name, `property ${name} should not exist`);
const k = (n: number) => 'k'.repeat(n);

describe('projector query parameters, judged by the contract schemas', () => {
  it.each<[Route, string, Record<string, string>]>([
    ['usage', 'tenant=q', { tenant: 'q' }],
    [
      'usage',
      'tenant=q&policy=p1&key=k1&granularity=minute&from=a&to=b&cursor=c&limit=5&namespace=live',
      {
        tenant: 'q',
        policy: 'p1',
        key: 'k1',
        granularity: 'minute',
        from: 'a',
        to: 'b',
        cursor: 'c',
        limit: '5',
        namespace: 'live',
      },
    ],
    [
      'usage',
      `tenant=${k(256)}&policy=_unmatched&key=${k(2048)}`,
      { tenant: k(256), policy: '_unmatched', key: k(2048) },
    ],
    // Ranges, instants and cursors are the lib parsers' (they list every problem together).
    ['usage', 'tenant=q&limit=0&cursor=&from=x', { tenant: 'q', limit: '0', cursor: '', from: 'x' }],
    ['usage', 'tenant=q&key=%F0%9F%98%80', { tenant: 'q', key: '😀' }],
    [
      'topKeys',
      'tenant=qk&policy=p1&granularity=hour&at=x&limit=1001&namespace=live',
      { tenant: 'qk', policy: 'p1', granularity: 'hour', at: 'x', limit: '1001', namespace: 'live' },
    ],
    ['audit', '', {}],
    [
      'audit',
      'tenant=acme&since=&limit=12345&cursor=c&namespace=live',
      { tenant: 'acme', since: '', limit: '12345', cursor: 'c', namespace: 'live' },
    ],
  ])('%s?%s is accepted as it came', async (route, query, value) => {
    expect(await sut(route, query)).toEqual({ value });
  });

  it.each<[Route, string, object[]]>([
    // missing and empty
    ['usage', '', [TENANT_REQUIRED]],
    ['usage', 'tenant=', [TENANT_LENGTH]],
    ['usage', 'tenant', [TENANT_LENGTH]],
    ['usage', `tenant=${k(257)}`, [TENANT_LENGTH]],
    ['topKeys', '', [TENANT_REQUIRED, err('policy', 'policy is required')]],
    ['topKeys', 'tenant=qk&policy=', [POLICY_NAME]],
    ['topKeys', 'policy=Not_A_Policy', [TENANT_REQUIRED, POLICY_NAME]],
    // shapes
    ['usage', 'tenant=q&policy=Bad', [POLICY_NAME]],
    ['usage', 'tenant=q&policy=p1&key=', [KEY]],
    ['usage', 'tenant=q&policy=p1&key=a%0Ab', [KEY]],
    ['usage', 'tenant=q&policy=p1&key=a%7Fb', [KEY]],
    ['usage', 'tenant=q&policy=p1&key=a%C2%85b', [KEY]],
    ['usage', `tenant=q&policy=p1&key=${k(2049)}`, [KEY]],
    ['usage', 'tenant=q&granularity=week', [GRANULARITY]],
    ['usage', 'tenant=q&granularity=', [GRANULARITY]],
    ['usage', 'tenant=q&limit=ten', [LIMIT(5000)]],
    ['usage', 'tenant=q&limit=', [LIMIT(5000)]],
    ['usage', 'tenant=q&limit=1234567', [LIMIT(5000)]],
    ['topKeys', 'tenant=qk&policy=p1&limit=1234567', [LIMIT(1000)]],
    ['audit', 'limit=123456', [LIMIT(1000)]],
    ['usage', 'tenant=q&namespace=Bad', [NAMESPACE]],
    ['usage', `tenant=q&namespace=${k(64)}`, [NAMESPACE]],
    ['audit', 'tenant=', [TENANT_LENGTH]],
    // unknown parameters: every name, first, in the order they came; Object's own names too
    ['usage', 'tenant=q&bogus=1', [unknown('bogus')]],
    ['usage', 'tenant=q&TENANT=x', [unknown('TENANT')]],
    ['usage', 'bogus=1&zzz=2&aaa=3', [unknown('bogus'), unknown('zzz'), unknown('aaa'), TENANT_REQUIRED]],
    [
      'usage',
      'tenant=q&__proto__=x&constructor=y&toString=z',
      [unknown('__proto__'), unknown('constructor'), unknown('toString')],
    ],
    ['topKeys', 'tenant=qk&policy=p1&key=k1&from=x', [unknown('key'), unknown('from')]],
    ['audit', 'policy=p1', [unknown('policy')]],
    // repeated parameters: an array, refused for its type
    ['usage', 'tenant=a&tenant=a', [TENANT_REQUIRED]],
    ['usage', 'tenant=q&policy=a&policy=b', [err('policy', 'policy must be a string')]],
    ['usage', 'tenant=q&policy=p1&key=a&key=b', [err('key', 'key must be a string')]],
    ['usage', 'tenant=q&granularity=hour&granularity=day', [GRANULARITY]],
    [
      'usage',
      'tenant=q&from=a&from=b&to=a&to=b&cursor=a&cursor=b',
      ['from', 'to', 'cursor'].map((f) => err(f, `${f} must be a string`)),
    ],
    ['usage', 'tenant=q&limit=1&limit=2&namespace=a&namespace=b', [LIMIT(5000), NAMESPACE]],
    ['usage', 'tenant=q&bogus=1&bogus=2', [unknown('bogus')]],
    [
      'topKeys',
      'tenant=qk&policy=a&policy=b&at=a&at=b',
      [err('policy', 'policy is required'), err('at', 'at must be a string')],
    ],
    [
      'audit',
      'tenant=a&tenant=b&since=a&since=b',
      [err('tenant', 'tenant must be a string'), err('since', 'since must be a string')],
    ],
    // everything at once: unknown names first, then the schema's order
    [
      'usage',
      'granularity=week&limit=x&namespace=Y&policy=Z&key=&bogus=1&tenant=a&tenant=b',
      [unknown('bogus'), TENANT_REQUIRED, POLICY_NAME, KEY, GRANULARITY, LIMIT(5000), NAMESPACE],
    ],
    ['usage', 'limit=x&granularity=week&tenant=', [TENANT_LENGTH, GRANULARITY, LIMIT(5000)]],
  ])('%s?%s is refused with every problem once', async (route, query, errors) => {
    expect(await sut(route, query)).toEqual({ errors });
  });

  it("refuses exactly the keys the projections' POLICY_KEY refuses, with its sentence", async () => {
    for (const key of ['k', 'é', '😀', k(2048), '', 'a\tb', 'a\u0000', 'a\u009fb', k(2049), `${k(2047)}😀`]) {
      const answer = await sut('usage', new URLSearchParams({ tenant: 'q', policy: 'p1', key }).toString());
      expect(answer, JSON.stringify(key)).toEqual(
        POLICY_KEY.test(key) ? { value: { tenant: 'q', policy: 'p1', key } } : { errors: [KEY] },
      );
    }
  });

  it('publishes the granularities the parsers accept', () => {
    for (const schema of [UsageQuerySchema, TopKeysQuerySchema] as TObject[]) {
      const granularity = schema.properties.granularity as unknown as { anyOf: { const: string }[] };
      expect(granularity.anyOf.map((g) => g.const)).toEqual([...GRANULARITIES]);
    }
  });
});
