import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installJsonBody } from './json-body';
import { MAX_JSON_DEPTH } from './json-depth';

describe(installJsonBody.name, () => {
  let sut: FastifyInstance;
  beforeEach(async () => {
    sut = Fastify();
    installJsonBody(sut, 64);
    sut.post('/echo', (request) => ({ got: request.body }));
    // Report the error as the problem filter would see it.
    sut.setErrorHandler((error: Error & { statusCode?: number; response?: unknown }, _req, reply) =>
      reply.status(error.statusCode ?? 500).send({ name: error.name, response: error.response ?? null }),
    );
    await sut.ready();
  });
  afterEach(async () => {
    await sut.close();
  });

  it('parses a JSON body, with or without a charset', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8']) {
      const res = await sut.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': type },
        payload: '{"a":1}',
      });

      expect(res.json()).toEqual({ got: { a: 1 } });
    }
  });

  it.each([
    ['empty', ''],
    ['blank', ' \n '],
    ['malformed', '{"a":'],
    ['poisoned', '{"__proto__":{"admin":true}}'],
  ])('refuses a %s body with ApiError request.malformed_json', async (_name, payload) => {
    const res = await sut.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload,
    });

    expect(res.json()).toEqual({
      name: 'ApiError',
      response: expect.objectContaining({ code: 'request.malformed_json' }),
    });
  });

  it('refuses a body nested deeper than MAX_JSON_DEPTH with request.invalid, before parsing it', async () => {
    // given an instance whose body limit lets a 20 kB body reach the parser
    await sut.close();
    sut = Fastify();
    installJsonBody(sut, 1_000_000);
    sut.post('/echo', (request) => ({ got: request.body }));
    sut.setErrorHandler((error: Error & { statusCode?: number; response?: unknown }, _req, reply) =>
      reply.status(error.statusCode ?? 500).send({ response: error.response ?? null }),
    );

    const res = await sut.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    });

    expect(res.json()).toEqual({
      response: {
        code: 'request.invalid',
        message: `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
      },
    });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])(
    'refuses %s with 415',
    async (type) => {
      const res = await sut.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': type },
        payload: 'a=b',
      });

      expect(res.statusCode).toBe(415);
    },
  );

  it('refuses a body above the limit with 413', async () => {
    const res = await sut.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ a: 'x'.repeat(100) }),
    });

    expect(res.statusCode).toBe(413);
  });
});
