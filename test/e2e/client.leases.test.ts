/**
 * Leases through the SDK and the Nest guard, end to end: `TallyClient.withLease`, `release` and `extend`, and
 * `TallyGuard` on a tiny Nest app on Fastify, against the real decision API (in process) and the real
 * Redis. Whether a unit came back is read from the decision API's state endpoint.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type FastifyRequest } from 'fastify';
import { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TallyClient, TallyRequestError, type TallyDecision } from '@tally/client';
import { Quota, TallyModule } from '@tally/client/nest';
import { eventually, uniqueName } from '@tally/testing';
import { CALLER_TOKEN, DecisionApiHarness } from './support/decision-api.harness';

const run = uniqueName('e2e-sdk-lease');
const POLICY = `${run}-jobs`;
const POLICIES = `
policies:
  - name: ${POLICY}
    key: [tenant]
    windows:
      - { name: inflight, role: burst, algorithm: concurrency, limit: 2, lease_ttl: 1m }
`;

/** Lets a guarded request's handler finish when the test says so. */
const gates = new Map<string, () => void>();

@Controller()
class JobsController {
  @Get('job')
  @Quota({ selectors: (req: FastifyRequest) => ({ tenant: String(req.headers['x-tenant']) }) })
  async job(): Promise<{ ok: true }> {
    return Promise.resolve({ ok: true });
  }

  @Get('slow-job')
  @Quota({ selectors: (req: FastifyRequest) => ({ tenant: String(req.headers['x-tenant']) }) })
  async slowJob(): Promise<{ ok: true }> {
    await new Promise<void>((resolve) => gates.set('slow', resolve));
    return { ok: true };
  }
}

let api: DecisionApiHarness;
let client: TallyClient;
let app: NestFastifyApplication;
let appUrl: string;

beforeAll(async () => {
  api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
  client = new TallyClient({ baseUrl: api.baseUrl, token: CALLER_TOKEN, timeoutMs: 5000 });
  @Module({
    imports: [TallyModule.forRoot({ baseUrl: api.baseUrl, token: CALLER_TOKEN, timeoutMs: 5000 })],
    controllers: [JobsController],
  })
  class AppModule {}
  app = await NestFactory.create<NestFastifyApplication>(AppModule as Type<unknown>, new FastifyAdapter(), {
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  appUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  client?.close();
  await api?.close();
});

const inflightLeft = async (tenant: string): Promise<number> =>
  (await api.remaining(POLICY, { tenant })).inflight;

describe('TallyClient leases', () => {
  it('withLease runs the work under a lease and releases it when the work returns', async () => {
    const tenant = uniqueName('acme');
    let during = -1;

    const result = await client.withLease({ selectors: { tenant } }, async (decision) => {
      during = await inflightLeft(tenant);
      return decision.lease?.id;
    });

    expect(result.ran).toBe(true);
    expect(result.ran && result.value).toMatch(/^s\d+-/);
    expect(during).toBe(1);
    expect(await inflightLeft(tenant)).toBe(2);
  });

  it('withLease releases the lease when the work throws, and rethrows', async () => {
    const tenant = uniqueName('acme');

    const failing = client.withLease({ selectors: { tenant } }, () => {
      throw new Error('work failed');
    });

    await expect(failing).rejects.toThrow('work failed');
    expect(await inflightLeft(tenant)).toBe(2);
  });

  it('withLease does not run the work when the decision is refused', async () => {
    const tenant = uniqueName('acme');
    const held: TallyDecision[] = [
      await client.decide({ selectors: { tenant } }),
      await client.decide({ selectors: { tenant } }),
    ];
    let ran = false;

    const result = await client.withLease({ selectors: { tenant } }, () => (ran = true));

    expect(result).toMatchObject({ ran: false, decision: { status: 429, allowed: false } });
    expect(ran).toBe(false);
    for (const d of held)
      expect(await client.release(d.lease?.id ?? '')).toMatchObject({ ok: true, outcome: 'released' });
  });

  it('release is idempotent, and a bad id is a TallyRequestError with its code', async () => {
    const tenant = uniqueName('acme');
    const d = await client.decide({ selectors: { tenant } });

    expect(await client.release(d.lease?.id ?? '')).toMatchObject({ ok: true, outcome: 'released' });
    expect(await client.release(d.lease?.id ?? '')).toMatchObject({ ok: true, outcome: 'already_released' });
    const error = await client.release('bogus').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyRequestError);
    expect(error).toMatchObject({ status: 400, code: 'lease.invalid_id' });
  });

  it('extend keeps the units for the TTL asked for (default: the lease TTL); a released lease throws 409', async () => {
    const tenant = uniqueName('acme');
    const d = await client.decide({ selectors: { tenant } });
    const id = d.lease?.id ?? '';

    const full = await client.extend(id);
    const asked = await client.extend(id, { ttlMs: 30_000 });

    expect(full).toEqual({
      ok: true,
      lease_id: id,
      expires_at: expect.any(String),
      ttl_ms: 60_000,
      max_ttl_ms: 60_000,
    });
    expect(asked).toMatchObject({ ok: true, expires_at: full.ok && full.expires_at }); // never shortens
    expect(await inflightLeft(tenant)).toBe(1);
    await client.release(id);
    const released = await client.extend(id).catch((e: unknown) => e);
    expect(released).toBeInstanceOf(TallyRequestError);
    expect(released).toMatchObject({ status: 409, code: 'lease.released' });
    const tooLong = await client.extend(id, { ttlMs: 60_001 }).catch((e: unknown) => e);
    expect(tooLong).toMatchObject({ status: 409, code: 'lease.released' }); // the lease's state comes first
    expect(await inflightLeft(tenant)).toBe(2);
  });

  it('extend answers {ok: false} when Tally cannot be reached, and the lease keeps its expiry', async () => {
    const unreachable = new TallyClient({
      baseUrl: 'http://127.0.0.1:9',
      token: CALLER_TOKEN,
      timeoutMs: 500,
    });
    try {
      expect(await unreachable.extend('s1-01JD0000000000000000000000')).toMatchObject({
        ok: false,
        failure: { kind: expect.any(String) as unknown },
      });
    } finally {
      unreachable.close();
    }
  });
});

describe('TallyGuard leases', () => {
  it('holds the lease while the route runs and releases it when the response is done', async () => {
    const tenant = uniqueName('acme');
    const headers = { 'x-tenant': tenant };

    const pending = fetch(`${appUrl}/slow-job`, { headers });
    await eventually(
      () => gates.has('slow'),
      (has) => has,
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    expect(await inflightLeft(tenant)).toBe(1);
    gates.get('slow')?.();
    gates.delete('slow');
    expect((await pending).status).toBe(200);

    await eventually(
      () => inflightLeft(tenant),
      (left) => left === 2,
      { timeoutMs: 10_000, intervalMs: 20, what: 'the guard to release the lease' },
    );
    // and every later request is served: nothing leaks across many
    for (let i = 0; i < 5; i++) expect((await fetch(`${appUrl}/job`, { headers })).status).toBe(200);
    await eventually(
      () => inflightLeft(tenant),
      (left) => left === 2,
      { timeoutMs: 10_000, intervalMs: 20, what: 'every lease released' },
    );
  });
});
