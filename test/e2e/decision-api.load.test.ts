/**
 * The decision API under concurrent HTTP load (real Redis): exactness at a limit's edge, and overload
 * shedding that is told apart from quota, never sheds health, and never leaks its in-flight count.
 */
import { type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import {
  CALLER_TOKEN,
  DecisionApiHarness,
  type DecisionBody,
  type HttpResult,
} from './support/decision-api.harness';

const run = uniqueName('e2e-load');
const POLICY = `${run}-p`;
const POLICIES = `
policies:
  - name: ${POLICY}
    key: [tenant]
    windows:
      - { name: minute, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
    on_backend_failure: fail_closed
`;
const SHED_POLICY = `${run}-shed`;
const SHED_POLICIES = `
policies:
  - name: ${SHED_POLICY}
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100000, period: 1h }
    on_backend_failure: fail_closed
`;

function count<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe(DecisionApiModule.name, () => {
  describe('500 concurrent requests at a limit of 100', () => {
    let sut: DecisionApiHarness;
    beforeAll(async () => {
      // A generous deadline: on a shared 2-core machine a timeout would be a 503, not a wrong count.
      sut = await DecisionApiHarness.start({
        redisUrl: inject('redisUrl'),
        policies: POLICIES,
        env: { TALLY_BACKEND_TIMEOUT_MS: '10000' },
      });
    });
    afterAll(async () => {
      await sut.close();
    });

    it('allows exactly 100 and denies exactly 400', async () => {
      // given one tenant and a limit of 100
      const selectors = { tenant: uniqueName('acme') };

      // when 500 requests race
      const results = await Promise.all(
        Array.from({ length: 500 }, () => sut.decide<DecisionBody>({ selectors })),
      );

      // then exactly the limit passed, and every denial is the quota's
      expect(count(results, (r) => `${r.status} ${r.body.code}`)).toEqual({
        '200 null': 100,
        '429 quota.exceeded': 400,
      });
      expect(new Set(results.map((r) => r.body.decision_id)).size).toBe(500);
      expect(await sut.remaining(POLICY, selectors)).toEqual({ minute: 0 });
    });

    it('charges 50 concurrent retries of one idempotent request once, all with one decision_id', async () => {
      // given one request sent 50 times at once with the same idempotency key
      const selectors = { tenant: uniqueName('acme') };
      const body = { selectors, cost: 3, idempotency_key: uniqueName('retry') };

      const results = await Promise.all(Array.from({ length: 50 }, () => sut.decide<DecisionBody>(body)));

      // then one was decided, 49 replayed it, and the window was charged once
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      expect(new Set(results.map((r) => r.body.decision_id)).size).toBe(1);
      expect(results.filter((r) => r.body.replayed)).toHaveLength(49);
      expect(await sut.remaining(POLICY, selectors)).toEqual({ minute: 97 });
    });
  });

  describe('overload shedding (TALLY_MAX_INFLIGHT=1)', () => {
    let sut: DecisionApiHarness;
    beforeAll(async () => {
      sut = await DecisionApiHarness.start({
        redisUrl: inject('redisUrl'),
        policies: SHED_POLICIES,
        env: { TALLY_MAX_INFLIGHT: '1', TALLY_BACKEND_TIMEOUT_MS: '10000' },
      });
    });
    afterAll(async () => {
      await sut.close();
    });

    it('sheds with 503 server.overloaded and Retry-After, never a quota code, and never sheds health', async () => {
      // given one tenant far from its limit, and the only slot held by a request whose body is still
      // arriving (its headers read): a barrier, not a race, so a busy machine cannot serve the
      // decisions below one at a time and shed none
      const selectors = { tenant: uniqueName('acme') };
      const held = await holdTheSlot(sut, selectors);

      // when 300 decisions race with health, readiness and metrics probes
      const decisions = Array.from({ length: 300 }, () => sut.decide<DecisionBody>({ selectors }));
      const probes = Array.from({ length: 30 }, (_, i) =>
        sut.call('GET', ['/healthz', '/readyz', '/metrics'][i % 3], { token: null }),
      );
      const [decided, probed] = await Promise.all([Promise.all(decisions), Promise.all(probes)]);

      // then every one is shed as overload, with Retry-After and no quota code
      expect(decided.map((r) => r.status)).toEqual(decided.map(() => 503));
      for (const r of decided) {
        expect(r.body).toEqual({ code: 'server.overloaded', message: expect.any(String) });
        expect(r.headers.get('retry-after')).toBe('1');
      }
      // and health was always answered, and the shed requests consumed nothing
      expect(probed.map((p: HttpResult) => p.status)).toEqual(probed.map(() => 200));
      expect(await held.finish()).toBe(200);
      expect(await sut.remaining(SHED_POLICY, selectors)).toEqual({ hourly: 100000 - 1 });
    });

    it('frees the slot of a request whose client went away before the answer', async () => {
      // given a client that sends headers and part of a body, then disconnects once the server has
      // read its headers (and taken the slot), and the server has seen it go: fixed waits instead let
      // a busy machine disconnect it before, and the test then passed without a slot ever held
      const { port } = new URL(sut.baseUrl);
      const server: Server = sut.app.getHttpServer();
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          const onRequest = (req: IncomingMessage): void => {
            if (req.socket.remotePort !== socket.localPort) return;
            server.off('request', onRequest);
            // the server's own close listeners (the response's, which free the slot) come first
            req.socket.once('close', () => setImmediate(resolve));
            // the hooks that take the slot run once this event's listeners return
            setImmediate(() => socket.destroy());
          };
          server.on('request', onRequest);
          socket.write(
            'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
              `Authorization: Bearer ${CALLER_TOKEN}\r\nContent-Length: 100\r\n\r\n{"selec`,
          );
        });
        socket.on('error', reject);
      });

      // when later requests come one at a time
      const later: number[] = [];
      for (let i = 0; i < 3; i++)
        later.push((await sut.decide({ selectors: { tenant: uniqueName('t') } })).status);

      // then they are served: the abandoned request does not hold the only slot
      expect(later).toEqual([200, 200, 200]);
    });
  });
});

/**
 * Takes the API's only in-flight slot with a decision whose body is sent in two parts, and returns
 * once a decision is shed (the slot is held); `finish` sends the rest and resolves its status.
 */
async function holdTheSlot(
  sut: DecisionApiHarness,
  selectors: Record<string, string>,
): Promise<{ finish: () => Promise<number> }> {
  const body = JSON.stringify({ selectors });
  const { port } = new URL(sut.baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  socket.write(
    'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${CALLER_TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body.slice(0, 7),
  );
  const deadline = Date.now() + 30_000;
  while ((await sut.decide({ selectors: { tenant: uniqueName('probe') } })).status !== 503) {
    if (Date.now() > deadline) throw new Error('the half-sent decision never held the slot');
  }
  return {
    finish: () =>
      new Promise<number>((resolve, reject) => {
        socket.once('error', reject);
        const done = (): void => {
          const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
          if (status) {
            socket.destroy();
            resolve(Number(status[1]));
          } else socket.once('data', done);
        };
        socket.once('data', done);
        socket.write(body.slice(7));
      }),
  };
}
