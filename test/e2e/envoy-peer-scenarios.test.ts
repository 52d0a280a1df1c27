/**
 * envoyproxy/ratelimit's own integration scenarios (`testBasicBaseConfig`, `testShareThreshold`,
 * ported as data in support/peer-scenarios.ts) against Tally serving the peer's configs as the peer
 * ships them (test/fixtures/envoy/peer, converted by `importEnvoyConfig`, i.e. `tally policy
 * import-envoy`), and against the peer itself when `PEER_RATELIMIT_BIN` points at its binary (run on
 * the same Redis; skipped with the reason printed otherwise). Real DecisionApiModule, gRPC, Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client } from '@grpc/grpc-js';
import { importEnvoyConfig } from '@tally/ops';
import { eventually, freePort, sleep } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RlsStack, type Answer } from './support/rls-stack.harness';
import { BASIC_BASE_CONFIG, SHARE_THRESHOLD, type PeerStatus, type PeerStep } from './support/peer-scenarios';

const FIXTURES = 'test/fixtures/envoy/peer';
const CONFIGS = ['basic.yaml', 'another.yaml', 'share_threshold.yaml'];
const converted = importEnvoyConfig(
  CONFIGS.map((f) => readFileSync(join(FIXTURES, f), 'utf8')).join('\n---\n'),
);
const PEER_BIN = process.env.PEER_RATELIMIT_BIN;

/** One `ShouldRateLimit` as a peer's test sees it. */
type Ask = (domain: string, descriptors: readonly (readonly [string, string])[][]) => Promise<Answer>;

/** Runs the steps in order; returns what each answered, as the step compares it, and the failures. */
async function replay(steps: readonly PeerStep[], ask: Ask): Promise<string[]> {
  const r = String(Math.floor(Math.random() * 2 ** 48));
  const vars: Record<string, string> = { $r: r, $r2: `${r}2` };
  const resets = new Map<string, number>();
  const failures: string[] = [];
  let n = 0;
  for (const step of steps) {
    if (step.sleepMsBefore) await sleep(step.sleepMsBefore);
    const descriptors = step.descriptors.map((entries) =>
      entries.map(([k, v]): [string, string] => [
        k,
        v.replace(/\$r2|\$r|\$n/g, (m) => (m === '$n' ? String(++n) : vars[m])),
      ]),
    );
    const answer = await ask(step.domain, descriptors);
    const seen = {
      overall: answer.overall_code,
      statuses: answer.statuses.map((s): PeerStatus => ({
        code: s.code as PeerStatus['code'],
        limit: s.current_limit ? [s.current_limit.requests_per_unit, s.current_limit.unit] : null,
        remaining: s.limit_remaining ?? 0,
      })),
    };
    const reset = Number(answer.statuses[0]?.duration_until_reset?.seconds ?? 0);
    resets.set(step.label, reset);
    if (step.expect && JSON.stringify(seen) !== JSON.stringify(step.expect))
      failures.push(`${step.label}: expected ${JSON.stringify(step.expect)}, got ${JSON.stringify(seen)}`);
    if (step.anyOf && !step.anyOf.includes(seen.overall as 'OK'))
      failures.push(`${step.label}: expected one of ${step.anyOf.join('|')}, got ${seen.overall}`);
    const below = step.resetBelow === undefined ? undefined : resets.get(step.resetBelow);
    if (below !== undefined && !(reset < below))
      failures.push(`${step.label}: duration_until_reset ${reset}s, expected below ${below}s`);
  }
  return failures;
}

const toRequest = (domain: string, descriptors: readonly (readonly [string, string])[][]) => ({
  domain,
  descriptors: descriptors.map((entries) => ({ entries: entries.map(([key, value]) => ({ key, value })) })),
  hits_addend: 1,
});

describe('envoyproxy/ratelimit integration scenarios, its configs unmodified', () => {
  it('import-envoy maps every rule of the peer integration configs', () => {
    expect(converted.ok && converted.unmapped).toEqual([]);
    expect(converted.ok && converted.policies.length).toBe(11);
  });

  describe('against Tally', () => {
    let sut: RlsStack;
    beforeAll(async () => {
      if (!converted.ok) throw new Error(JSON.stringify(converted.errors));
      sut = await RlsStack.start(inject('redisUrl'), converted.yaml);
    });
    afterAll(async () => {
      await sut?.close();
    });
    const ask: Ask = (domain, descriptors) => sut.call(toRequest(domain, descriptors));

    it('testBasicBaseConfig: 44 calls, every answer as the peer asserts', async () => {
      expect(await replay(BASIC_BASE_CONFIG, ask)).toEqual([]);
    });

    it('testShareThreshold: 21 calls, every answer as the peer asserts', async () => {
      expect(await replay(SHARE_THRESHOLD, ask)).toEqual([]);
    });
  });

  describe.runIf(PEER_BIN !== undefined)('against the peer (PEER_RATELIMIT_BIN)', () => {
    let peer: ChildProcess | undefined;
    let dir: string;
    let client: Client;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tally-peer-'));
      await mkdir(join(dir, 'ratelimit', 'config'), { recursive: true });
      for (const f of CONFIGS) await copyFile(join(FIXTURES, f), join(dir, 'ratelimit', 'config', f));
      const [http, grpc, debug] = [await freePort(), await freePort(), await freePort()];
      const redis = new URL(inject('redisUrl'));
      peer = spawn(PEER_BIN as string, [], {
        // Its stats sink logs every flush at any LOG_LEVEL: a peer that does not start fails `eventually` below.
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH,
          USE_STATSD: 'false',
          LOG_LEVEL: 'warn',
          RUNTIME_ROOT: dir,
          RUNTIME_SUBDIRECTORY: 'ratelimit',
          RUNTIME_WATCH_ROOT: 'false',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: `${redis.hostname}:${redis.port || '6379'}`,
          HOST: '127.0.0.1',
          PORT: String(http),
          GRPC_HOST: '127.0.0.1',
          GRPC_PORT: String(grpc),
          DEBUG_HOST: '127.0.0.1',
          DEBUG_PORT: String(debug),
        },
      });
      client = RlsStack.client(`127.0.0.1:${grpc}`);
      await eventually(
        () =>
          askPeer('basic', [[['key0', 'ready']]]).then(
            () => true,
            () => false,
          ),
        (up) => up,
        { timeoutMs: 30_000, intervalMs: 200, what: 'the peer to answer gRPC' },
      );
    });
    afterAll(async () => {
      client?.close();
      peer?.kill('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    });
    const askPeer: Ask = (domain, descriptors) =>
      RlsStack.prototype.call.call({}, toRequest(domain, descriptors), null, client);

    it('testBasicBaseConfig', async () => {
      expect(await replay(BASIC_BASE_CONFIG, askPeer)).toEqual([]);
    });

    it('testShareThreshold', async () => {
      expect(await replay(SHARE_THRESHOLD, askPeer)).toEqual([]);
    });
  });

  it.skipIf(PEER_BIN !== undefined)('against the peer: skipped, PEER_RATELIMIT_BIN is not set', () => {
    console.log('envoy-peer-scenarios: PEER_RATELIMIT_BIN not set, the peer run is skipped');
  });
});
