/**
 * The built projector (dist/, `npm run build` first) as real child processes, two members of one
 * group, against REAL Kafka and a REAL redis-server of this suite: one member is SIGKILLed mid-stream,
 * the other takes its partitions over and the usage totals come out exact; the survivor then stops
 * gracefully on SIGTERM (exit 0, group left).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventually, freePort, PrivateRedis, testEnv } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventsOf,
  getJson,
  type HttpResult,
  PROJECTOR_POLL,
  projectorEnv,
  RunTopics,
  type Decision,
} from '../integration/projector.harness';

const ROOT = resolve(__dirname, '../..');
const DIST = resolve(ROOT, 'dist');
const T0 = Date.parse('2026-10-06T00:00:00Z');

/** main.ts of the built app, with this run's topics and group instead of the production names. */
const CHILD = `
require('reflect-metadata');
const { runHttpApp } = require(${JSON.stringify(`${DIST}/libs/http/src/index.js`)});
const { ProjectorModule } = require(${JSON.stringify(`${DIST}/apps/projector/src/projector.module.js`)});
const overrides = JSON.parse(process.env.E2E_PROJECTOR_OVERRIDES);
void runHttpApp({ name: 'projector', port: (c) => c.projectorPort, module: (c) => ProjectorModule.forRoot(c, overrides) });
`;

interface Readiness {
  readonly components?: Readonly<Record<string, { readonly status: string }>>;
}

/** What a child that does not listen yet "answers". */
const NOT_LISTENING: HttpResult<Readiness> = { status: 0, body: {} };

interface Child {
  readonly process: ChildProcess;
  readonly baseUrl: string;
  readonly exited: Promise<number | null>;
}

let redis: PrivateRedis;
let run: RunTopics;
const children: Child[] = [];

async function startChild(): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', CHILD], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      ...projectorEnv(redis.url, testEnv().kafkaBrokers),
      TALLY_PROJECTOR_PORT: String(port),
      E2E_PROJECTOR_OVERRIDES: JSON.stringify({ ...run.overrides, sessionTimeoutMs: 8_000 }),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const started: Child = { process: child, baseUrl: `http://127.0.0.1:${port}`, exited };
  children.push(started);
  await eventually(
    () => getJson<Readiness>(started.baseUrl, '/readyz', null).catch(() => NOT_LISTENING),
    (res) => res.body.components?.consumer?.status === 'up',
    PROJECTOR_POLL,
  );
  return started;
}

beforeAll(async () => {
  if (!existsSync(`${DIST}/apps/projector/src/projector.module.js`)) {
    throw new Error('dist/ is missing: run `npm run build` first');
  }
  redis = await PrivateRedis.start();
  run = new RunTopics(testEnv().kafkaBrokers, 'e2e-projector-kill');
  await run.create();
});

afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
  await run?.close();
  await redis?.stop();
});

describe('projector processes (built app, real Kafka, real Redis)', () => {
  it('loses and double counts nothing when a member is SIGKILLed mid-stream; the other stops cleanly', async () => {
    const a = await startChild();
    const b = await startChild();
    // many tenants, so both members own busy partitions
    const decisions: Decision[] = Array.from({ length: 3000 }, (_, i) => ({
      tenant: `t${i % 17}`,
      cost: (i % 7) + 1,
      timeMs: T0 + i * 997,
    }));
    const want = new Map<string, number>();
    for (const d of decisions) want.set(d.tenant ?? '', (want.get(d.tenant ?? '') ?? 0) + d.cost);

    for (let wave = 0; wave < 10; wave++) {
      await run.produce(decisions.slice(wave * 300, (wave + 1) * 300).flatMap(eventsOf));
      if (wave === 4) a.process.kill('SIGKILL');
    }
    expect(await a.exited).toBeNull();

    const range = 'granularity=day&from=2026-10-06T00:00:00Z&to=2026-10-08T00:00:00Z';
    for (const [tenant, cost] of want) {
      const body = await eventually(
        () =>
          getJson<{ total: { cost: number; count: number } }>(
            b.baseUrl,
            `/v1/usage?tenant=${tenant}&${range}`,
          ),
        (res) => res.body.total?.cost >= cost,
        { ...PROJECTOR_POLL, timeoutMs: 60_000 },
      );
      expect(body.body.total).toEqual({ cost, count: decisions.filter((d) => d.tenant === tenant).length });
    }

    b.process.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    const group = await run.ledger.admin.describeGroup(run.groupId);
    expect(group.members).toEqual([]);
  }, 150_000);
});
