/**
 * The SDK's fail mode `local` against a Tally that stops: the real decision API (in process, real
 * Redis) answers first; once it is closed, the client's bounded local limiter decides, with the
 * server's window maths (compared here with @tally/engine's `evaluateWindow`, decision by decision),
 * and `TallyGuard` answers 429 with its headers from it. Real sockets on loopback.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type FastifyRequest } from 'fastify';
import { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TallyClient, type TallyDecision, type TallyLocalWindow } from '@tally/client';
import { Quota, TallyModule } from '@tally/client/nest';
import { ALGORITHM_REGISTRY, evaluateWindow, type WindowState } from '@tally/engine';
import { freePort, uniqueName } from '@tally/testing';
import { CALLER_TOKEN, DecisionApiHarness } from './support/decision-api.harness';

const HOUR = 3_600_000;
const run = uniqueName('e2e-local');
const POLICIES = `
policies:
  - name: ${run}
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
`;
const hourly: TallyLocalWindow = {
  name: 'hourly',
  role: 'sustained',
  algorithm: 'fixed_window',
  limit: 3,
  periodMs: HOUR,
};

describe(`${TallyClient.name} with failMode local`, () => {
  let api: DecisionApiHarness | undefined;
  const clients: TallyClient[] = [];
  const client = (baseUrl: string, windows: TallyLocalWindow[], clock?: () => number): TallyClient => {
    const c = new TallyClient({
      baseUrl,
      token: CALLER_TOKEN,
      timeoutMs: 5_000,
      failMode: 'local',
      localFallback: { windows, ...(clock && { clock }) },
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await api?.close();
  });

  it('decides through Tally while it answers, then from its own limiter once Tally is stopped', async () => {
    const sut = client(api!.baseUrl, [hourly]);
    const tenant = uniqueName('t');
    expect(await sut.decide({ selectors: { tenant } })).toMatchObject({
      status: 200,
      degraded: false,
      policies: [{ name: run, windows: [{ remaining: 99 }] }],
    });

    // when Tally stops
    await api!.close();
    api = undefined;
    const decisions: TallyDecision[] = [];
    for (let i = 0; i < 5; i++) decisions.push(await sut.decide({ selectors: { tenant } }));
    const batch = await sut.decideBatch([{ selectors: { tenant: 'other' } }, { selectors: { tenant } }]);

    // then exactly the local limit is allowed, marked degraded, and the rest is a quota denial
    expect(decisions.map((d) => d.status)).toEqual([200, 200, 200, 429, 429]);
    for (const d of decisions) {
      expect(d).toMatchObject({ degraded: true, degraded_cause: 'client_unreachable', decision_id: null });
      expect(d.failure?.kind).toBe('connection');
    }
    expect(decisions[3]).toMatchObject({
      allowed: false,
      reason: 'sustained_quota_exhausted',
      code: 'quota.exceeded',
      rateLimit: { binding: { policy: 'local_fallback', window: 'hourly', remaining: 0 } },
    });
    expect(decisions[3].retry_after_ms).toBeGreaterThan(0);
    expect(Number(decisions[3].rateLimitHeaders['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(batch.map((item) => item.ok && item.decision.status)).toEqual([200, 429]);
    expect(sut.localFallbackKeys).toBe(2);
  });

  // Every algorithm the engine's registry says the SDK runs (`clientLocal`).
  const CLIENT_LOCAL = (Object.keys(ALGORITHM_REGISTRY) as (keyof typeof ALGORITHM_REGISTRY)[]).filter(
    (a) => ALGORITHM_REGISTRY[a].clientLocal,
  ) as TallyLocalWindow['algorithm'][];

  it.each<TallyLocalWindow['algorithm']>(CLIENT_LOCAL)(
    'computes %s as the server does (evaluateWindow), decision by decision',
    async (algorithm) => {
      // given a clock the test moves, and a random but reproducible sequence of costs
      let now = 1_700_000_040_000;
      const window = {
        ...hourly,
        algorithm,
        limit: 10,
        periodMs: 1_000,
        ...(algorithm === 'gcra' && { burst: 4 }),
      };
      const sut = client(`http://127.0.0.1:${await freePort()}`, [window], () => now);
      let state: WindowState = {};
      let seed = 11;
      const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
      for (let i = 0; i < 200; i++) {
        now += random(150);
        const cost = 1 + random(3);
        const expected = evaluateWindow(window, state, now, cost);
        state = expected.nextState;

        const got = await sut.decide({ selectors: { tenant: 'parity' }, cost });

        expect({
          allowed: got.allowed,
          remaining: got.policies[0]?.windows[0].remaining,
          reset: got.policies[0]?.windows[0].reset_ms,
          retry: got.retry_after_ms,
        }).toEqual({
          allowed: expected.allowed,
          remaining: expected.remaining,
          reset: expected.resetMs,
          retry: expected.retryAfterMs,
        });
      }
    },
  );
});

@Controller()
class GuardedController {
  @Get('items')
  @Quota({ selectors: (req: FastifyRequest) => ({ tenant: String(req.headers['x-tenant']) }) })
  items(): { ok: true } {
    return { ok: true };
  }
}

describe('TallyGuard with failMode local and Tally unreachable', () => {
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    @Module({
      imports: [
        TallyModule.forRoot({
          baseUrl: down,
          token: CALLER_TOKEN,
          failMode: 'local',
          localFallback: { windows: [{ ...hourly, limit: 2 }] },
        }),
      ],
      controllers: [GuardedController],
    })
    class AppModule {}
    app = await NestFactory.create<NestFastifyApplication>(AppModule as Type<unknown>, new FastifyAdapter(), {
      logger: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lets the local limit through with RateLimit headers, then answers 429 with Retry-After', async () => {
    const headers = { 'x-tenant': uniqueName('acme') };

    const [first, second, third] = [
      await fetch(`${url}/items`, { headers }),
      await fetch(`${url}/items`, { headers }),
      await fetch(`${url}/items`, { headers }),
    ];

    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(first.headers.get('ratelimit-name')).toBe('local_fallback');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect(third.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await third.json()).toMatchObject({ code: 'quota.exceeded', reason: 'sustained_quota_exhausted' });
    // another caller has its own local quota
    expect((await fetch(`${url}/items`, { headers: { 'x-tenant': uniqueName('other') } })).status).toBe(200);
  });
});
