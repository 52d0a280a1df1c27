/**
 * `TallyGuard` end to end: a tiny Nest app on Fastify puts a route behind `@Quota`, and real HTTP
 * requests go through it into the real decision API (in process) and the real Redis.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type FastifyRequest } from 'fastify';
import { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Quota, TallyGuard, TallyModule, type TallyModuleOptions } from '@tally/client/nest';
import { freePort, uniqueName } from '@tally/testing';
import { CALLER_TOKEN, DecisionApiHarness } from './support/decision-api.harness';

const run = uniqueName('e2e-guard');
const POLICY = `${run}-guarded`;
const POLICIES = `
policies:
  - name: ${POLICY}
    match: { route: guarded }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 2, period: 1h }
`;

/** The tenant from a header; absent stays absent so Tally answers selector_identity_missing. */
const selectors = (req: FastifyRequest): Record<string, string> => {
  const tenant = req.headers['x-tenant'];
  return typeof tenant === 'string' ? { tenant, route: 'guarded' } : { route: 'guarded' };
};

@Controller()
class ItemsController {
  @Get('items')
  @Quota({ selectors })
  items(): { ok: true } {
    return { ok: true };
  }

  @Get('bulk')
  @Quota({
    selectors,
    cost: (req: FastifyRequest) => Number(req.headers['x-cost'] ?? 1),
    idempotencyKey: (req: FastifyRequest) => req.headers['idempotency-key'] as string | undefined,
  })
  bulk(): { ok: true } {
    return { ok: true };
  }

  @Get('lenient')
  @Quota({ selectors, failMode: 'open' })
  lenient(): { ok: true } {
    return { ok: true };
  }

  @Get('free')
  free(): { ok: true } {
    return { ok: true };
  }
}

interface App {
  readonly url: string;
  close(): Promise<void>;
}

async function startApp(options: TallyModuleOptions): Promise<App> {
  @Module({ imports: [TallyModule.forRoot(options)], controllers: [ItemsController] })
  class AppModule {}
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule as Type<unknown>,
    new FastifyAdapter(),
    { logger: false },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

let api: DecisionApiHarness;
let sut: App;
let unreachable: App;

beforeAll(async () => {
  api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
  sut = await startApp({ baseUrl: api.baseUrl, token: CALLER_TOKEN, timeoutMs: 5000, failMode: 'closed' });
  const down = `http://127.0.0.1:${await freePort()}`;
  unreachable = await startApp({ baseUrl: down, token: CALLER_TOKEN, failMode: 'closed' });
});
afterAll(async () => {
  await sut?.close();
  await unreachable?.close();
  await api?.close();
});

const get = (app: App, path: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${app.url}${path}`, { headers });

describe(TallyGuard.name, () => {
  it('lets requests through with RateLimit headers, then answers 429 with Retry-After at the limit', async () => {
    const headers = { 'x-tenant': uniqueName('acme') };

    const first = await get(sut, '/items', headers);
    const second = await get(sut, '/items', headers);
    const third = await get(sut, '/items', headers);

    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    expect(first.headers.get('ratelimit-name')).toBe(POLICY);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect(first.headers.get('ratelimit-policy')).toBe(`"${POLICY}.hourly";q=2`);
    expect(first.headers.get('retry-after')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get('ratelimit-remaining')).toBe('0');
    expect(third.headers.get('ratelimit')).toMatch(new RegExp(`^"${POLICY}\\.hourly";r=0;t=\\d+$`));
    expect(await third.json()).toMatchObject({
      code: 'quota.exceeded',
      reason: 'sustained_quota_exhausted',
      retry_after_ms: expect.any(Number),
      decision_id: expect.any(String),
    });
  });

  it('spends the cost the route computes and replays a request with its idempotency key', async () => {
    const tenant = uniqueName('acme');

    const first = await get(sut, '/bulk', { 'x-tenant': tenant, 'x-cost': '2', 'idempotency-key': 'k' });
    const replay = await get(sut, '/bulk', { 'x-tenant': tenant, 'x-cost': '2', 'idempotency-key': 'k' });

    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(await api.remaining(POLICY, { tenant })).toEqual({ hourly: 0 });
  });

  it('answers 400 when the request carries no identity, never letting it through', async () => {
    const res = await get(sut, '/items');

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'selector.identity_missing' });
  });

  it('answers 400 to an idempotency key outside the alphabet, spending nothing', async () => {
    const tenant = uniqueName('acme');

    const res = await get(sut, '/bulk', { 'x-tenant': tenant, 'idempotency-key': 'key with spaces' });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'idempotency_key.invalid' });
    expect(await api.remaining(POLICY, { tenant })).toEqual({ hourly: 2 });
  });

  it('leaves routes without @Quota alone', async () => {
    const res = await get(unreachable, '/free');

    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it('fails closed with 503 and Retry-After when Tally is unreachable', async () => {
    const res = await get(unreachable, '/items', { 'x-tenant': 'acme' });

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ code: 'backend.unavailable', reason: 'backend_unavailable' });
  });

  it('fails open on a route that asks for it', async () => {
    const res = await get(unreachable, '/lenient', { 'x-tenant': 'acme' });

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});
