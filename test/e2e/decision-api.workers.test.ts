/**
 * `TALLY_WORKERS=2`: the built decision API (`main.js`, compiled by this suite into a private folder)
 * as a primary and two workers sharing one HTTP port, against the real Redis. Requests are served by
 * two worker pids (told apart by `x-tally-worker` on `/healthz`, per connection: node:cluster hands
 * each new connection to the next worker), each forked with the memory settings the primary lacks;
 * `/metrics` sums both; a policy reload asked of one worker is in force in both once it is answered;
 * a worker killed is forked again and service goes on; SIGTERM stops every process with exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { credentials, Metadata, type Client } from '@grpc/grpc-js';
import { loadRateLimitService, type RlsRequest } from '@tally/envoy-rls';
import { WORKER_NODE_FLAGS, workerAllocatorEnv } from '@tally/cluster';
import { tokenDigestHex } from '@tally/auth';
import { buildTree, eventually, freePort, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { metricSum } from './support/decision-api.harness';

const root = resolve(__dirname, '../..');
const run = uniqueName('e2e-workers');
const out = join(root, '.local', run);
const dir = mkdtempSync(join(tmpdir(), 'tally-workers-'));
// The app reads the policy file through a link in a folder of its own: it watches that folder, so a
// change made beside the real file is one it can only learn of through the reload request under test.
const policyPath = join(dir, 'watched', 'policies.yaml');
const realPolicyPath = join(dir, 'real', 'policies.yaml');
const tokensPath = join(dir, 'watched', 'tokens.yaml');
const realTokensPath = join(dir, 'real', 'tokens.yaml');
const EARLY = `early-token-${run}`;
const LATE = `late-token-${run}`;

/** A tokens file granting `decide` to each token given. */
const tokensFile = (tokens: readonly string[]): string =>
  `tokens:\n${tokens.map((t, i) => `  - { name: t${i}, sha256: ${tokenDigestHex(t)}, roles: [decide] }`).join('\n')}\n`;
const CALLER = 'workers-e2e-caller-token-0123456789';
const ADMIN = 'workers-e2e-admin-token-0123456789';
const POLICY = `${run}-p`;
const DOMAIN = `${run}-edge`;

const policies = (limit: number): string => `policies:
  - name: ${POLICY}-rls
    match: { domain: ${DOMAIN} }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }
  - name: ${POLICY}
    match: { route: http }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: ${limit}, period: 1h }
`;

interface Answer {
  readonly status: number;
  readonly worker: string | undefined;
  readonly body: Record<string, unknown>;
}

/** One HTTP/1.1 call over `agent` (a kept-alive single connection, hence a single worker). */
function call(
  port: number,
  agent: Agent,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const json = (res.headers['content-type'] ?? '').includes('json');
          done({
            status: res.statusCode ?? 0,
            worker: res.headers['x-tally-worker'] as string | undefined,
            body: json ? (JSON.parse(text) as Record<string, unknown>) : { text },
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A gRPC client on a connection of its own (grpc-js shares one between equal clients otherwise). */
function rlsClient(port: number): Client {
  const { Client: RlsClient } = loadRateLimitService();
  return new RlsClient(`127.0.0.1:${port}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}

function shouldRateLimit(client: Client, request: RlsRequest): Promise<unknown> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${CALLER}`);
  type Unary = (r: RlsRequest, m: Metadata, o: object, cb: (e: Error | null, a: unknown) => void) => void;
  const method = (client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(client);
  return new Promise((done, fail) =>
    method(request, metadata, { deadline: Date.now() + 30_000 }, (error, answer) =>
      error ? fail(error) : done(answer),
    ),
  );
}

/** Remote ports of the established TCP connections that `pid` holds on local port `port` (Linux /proc). */
function connectionsOf(pid: string, port: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const socket = /^socket:\[(\d+)\]$/.exec(link);
    if (socket) inodes.add(socket[1]);
  }
  const remotes = new Set<number>();
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== '01' || !inodes.has(cols[9])) continue; // 01: ESTABLISHED
    if (parseInt(cols[1].split(':')[1], 16) === port) remotes.add(parseInt(cols[2].split(':')[1], 16));
  }
  return remotes;
}

interface Started {
  readonly child: ChildProcess;
  readonly port: number;
  readonly grpcPort: number;
  readonly stderr: string[];
  readonly exited: Promise<number | null>;
}

let api: Started;

/** A worker reached over one kept-alive connection: its pid and the agent that holds the connection. */
interface WorkerLine {
  readonly pid: string;
  readonly agent: Agent;
  readonly call: (method: string, path: string, token?: string, body?: unknown) => Promise<Answer>;
}

/**
 * Opens connections until `count` distinct workers have answered `/healthz`, one line each. Every
 * call on a line checks afterwards that the connection still reaches the same worker.
 */
async function workerLines(count: number): Promise<WorkerLine[]> {
  const lines = new Map<string, WorkerLine>();
  const spare: Agent[] = [];
  await eventually(
    async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const hello = await call(api.port, agent, 'GET', '/healthz').catch(() => undefined);
      const pid = hello?.worker;
      if (pid === undefined || lines.has(pid)) spare.push(agent);
      else {
        lines.set(pid, {
          pid,
          agent,
          call: async (method, path, token, body) => {
            const answer = await call(api.port, agent, method, path, token, body);
            const after = await call(api.port, agent, 'GET', '/healthz');
            if (after.worker !== pid)
              throw new Error(`the connection to worker ${pid} moved to ${after.worker}`);
            return answer;
          },
        });
      }
      return lines.size;
    },
    (n) => n >= count,
    { timeoutMs: 30_000, intervalMs: 50, what: `${count} workers answering` },
  );
  for (const agent of spare) agent.destroy();
  return [...lines.values()];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  mkdirSync(join(dir, 'watched'));
  mkdirSync(join(dir, 'real'));
  writeFileSync(realPolicyPath, policies(1000));
  symlinkSync(realPolicyPath, policyPath);
  writeFileSync(realTokensPath, tokensFile([EARLY]));
  symlinkSync(realTokensPath, tokensPath);
  await buildTree(out, ['decision-api']);
  const [port, grpcPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(out, 'apps/decision-api/src/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      REDIS_URL: inject('redisUrl'),
      TALLY_POLICIES: policyPath,
      TALLY_API_TOKENS: CALLER,
      TALLY_ADMIN_TOKEN: ADMIN,
      TALLY_TOKEN_SECRET: 'workers-e2e-token-secret-0123456789',
      TALLY_LOG_LEVEL: 'warn',
      TALLY_WORKERS: '2',
      TALLY_TOKENS_FILE: tokensPath,
      TALLY_HTTP_PORT: String(port),
      TALLY_GRPC_PORT: String(grpcPort),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(String(d)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  api = { child, port, grpcPort, stderr, exited };
}, 180_000);

afterAll(() => {
  if (api.child.exitCode === null) api.child.kill('SIGKILL');
  rmSync(out, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('decision-api with TALLY_WORKERS=2', () => {
  it('serves from two worker processes, neither of them the primary', async () => {
    const lines = await workerLines(2);
    const pids = lines.map((l) => l.pid);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(String(api.child.pid));
    for (const line of lines) line.agent.destroy();
  });

  it('forks every worker with the memory settings, though the primary was started without them', async () => {
    // Given: the primary runs as `node main.js`, no node flags, no MALLOC_ARENA_MAX or LD_PRELOAD
    const words = (pid: string, file: string): string[] =>
      readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');
    const primary = String(api.child.pid);
    for (const flag of WORKER_NODE_FLAGS) expect(words(primary, 'cmdline')).not.toContain(flag);
    expect(words(primary, 'environ')).not.toContain('MALLOC_ARENA_MAX=2');
    // (the stack script installs redis-server, whose Debian packages bring libjemalloc2; on a host
    // without one the workers keep glibc's malloc)
    const jemalloc = workerAllocatorEnv({}).LD_PRELOAD;
    expect(readFileSync(`/proc/${primary}/maps`, 'utf8')).not.toContain('libjemalloc');
    // Then: each worker runs with the decision API's (libs/cluster cluster.runtime.ts), jemalloc loaded
    const lines = await workerLines(2);
    for (const line of lines) {
      for (const flag of WORKER_NODE_FLAGS) expect(words(line.pid, 'cmdline')).toContain(flag);
      expect(words(line.pid, 'environ')).toContain('MALLOC_ARENA_MAX=2');
      const maps = readFileSync(`/proc/${line.pid}/maps`, 'utf8');
      if (jemalloc === undefined) expect(maps).not.toContain('libjemalloc');
      else {
        expect(words(line.pid, 'environ')).toContain(`LD_PRELOAD=${jemalloc}`);
        expect(maps).toContain(jemalloc);
      }
      line.agent.destroy();
    }
  });

  it('serves Envoy gRPC from both workers on the one shared port', async () => {
    // given four gRPC clients, each on its own connection (handed to the workers in turn)
    const lines = await workerLines(2);
    const clients = [0, 1, 2, 3].map(() => rlsClient(api.grpcPort));
    try {
      // when each asks once
      for (const [i, client] of clients.entries()) {
        const request = {
          domain: DOMAIN,
          descriptors: [{ entries: [{ key: 'tenant', value: `${run}-g${i}` }] }],
        };
        await shouldRateLimit(client, request);
      }

      // then both workers hold some of those connections, and /metrics counts all four calls
      const held = lines.map((l) => connectionsOf(l.pid, api.grpcPort).size);
      expect(
        held.every((n) => n >= 1),
        `gRPC connections per worker: ${held.join(', ')}`,
      ).toBe(true);
      expect(held.reduce((a, b) => a + b, 0)).toBe(4);
      const text = String((await lines[0].call('GET', '/metrics')).body.text);
      expect(metricSum(text, 'tally_grpc_requests_decoded_total', {})).toBe(4);
    } finally {
      for (const client of clients) client.close();
      for (const line of lines) line.agent.destroy();
    }
  });

  it('answers /metrics with the sum over the workers, labels unchanged', async () => {
    // given 3 decisions on one worker and 5 on the other
    const [a, b] = await workerLines(2);
    const allowed = { outcome: 'allowed', app: 'decision-api' };
    const decided = (text: string) => metricSum(text, 'tally_decisions_total', allowed);
    // (the gRPC calls above were decisions too)
    const before = decided(String((await a.call('GET', '/metrics')).body.text));
    const counts = [3, 5];
    for (const [i, line] of [a, b].entries()) {
      for (let n = 0; n < counts[i]; n++) {
        const res = await line.call('POST', '/v1/decisions', CALLER, {
          selectors: { tenant: `${run}-m${i}`, route: 'http' },
        });
        expect(res.status).toBe(200);
      }
    }

    // when /metrics is read from either worker, then it counts all 8 under the usual labels
    for (const line of [a, b]) {
      const text = String((await line.call('GET', '/metrics')).body.text);
      expect(decided(text) - before).toBe(8);
      expect(metricSum(text, 'tally_policy_decisions_total', { ...allowed, policy: POLICY })).toBe(8);
      // states are not summed: one policy set in force, one breaker state
      expect(metricSum(text, 'tally_policy_set_info', {})).toBe(1);
      expect(metricSum(text, 'tally_breaker_state', {})).toBe(0);
    }
    a.agent.destroy();
    b.agent.destroy();
  });

  it('applies a policy reload asked of one worker in every worker before answering', async () => {
    const [a, b] = await workerLines(2);
    // given a policy file with a limit of 1 (written aside and renamed over, unseen by the file watch)
    writeFileSync(`${realPolicyPath}.next`, policies(1));
    renameSync(`${realPolicyPath}.next`, realPolicyPath);

    // when worker a is asked to reload
    const reload = await a.call('POST', '/v1/policies:reload', ADMIN);
    expect(reload.status).toBe(200);
    const version = reload.body.version;

    // then, right away, both workers run that version and decide by the new limit
    for (const line of [a, b]) {
      const listed = await line.call('GET', '/v1/policies', ADMIN);
      expect(listed.body.version).toBe(version);
      const selectors = { tenant: `${run}-r${line.pid}`, route: 'http' };
      expect((await line.call('POST', '/v1/decisions', CALLER, { selectors })).status).toBe(200);
      expect((await line.call('POST', '/v1/decisions', CALLER, { selectors })).status).toBe(429);
    }

    // and the reload history is the workers' merged: the same list from either, this reload once
    const [fromA, fromB] = [
      await a.call('GET', '/v1/policy-reloads', ADMIN),
      await b.call('GET', '/v1/policy-reloads', ADMIN),
    ];
    expect(fromA.body).toEqual(fromB.body);
    const reloads = (fromA.body as { reloads: { version: string | null; outcome: string }[] }).reloads;
    expect(reloads.filter((r) => r.version === version && r.outcome === 'applied')).toHaveLength(1);
    a.agent.destroy();
    b.agent.destroy();
  });

  it('applies a tokens reload asked of one worker in every worker before answering', async () => {
    const [a, b] = await workerLines(2);
    // a tenant per call: the policy's limit is 1 since the policy reload above
    let calls = 0;
    const decide = (line: WorkerLine, token: string) =>
      line.call('POST', '/v1/decisions', token, {
        selectors: { tenant: `${run}-t${line.pid}-${calls++}`, route: 'http' },
      });
    // given a token that no worker knows yet
    for (const line of [a, b]) {
      expect((await decide(line, EARLY)).status).toBe(200);
      expect((await decide(line, LATE)).status).toBe(401);
    }

    // when the tokens file gains it (unseen by the watch) and worker b is asked to reload
    writeFileSync(`${realTokensPath}.next`, tokensFile([EARLY, LATE]));
    renameSync(`${realTokensPath}.next`, realTokensPath);
    const reload = await b.call('POST', '/v1/tokens:reload', ADMIN);
    expect(reload.status).toBe(200);

    // then, right away, both workers accept it
    for (const line of [a, b]) expect((await decide(line, LATE)).status).toBe(200);
    a.agent.destroy();
    b.agent.destroy();
  });

  it('forks a worker again when one dies, and keeps serving', async () => {
    // given the two workers
    const before = await workerLines(2);
    const victim = Number(before[0].pid);
    for (const line of before) line.agent.destroy();

    // when one is killed outright
    process.kill(victim, 'SIGKILL');
    await eventually(
      () => alive(victim),
      (up) => !up,
      { timeoutMs: 10_000, intervalMs: 50, what: 'the kill' },
    );

    // then two workers answer again, one of them new, and decisions go on
    const after = await workerLines(2);
    const pids = after.map((l) => Number(l.pid));
    expect(pids).not.toContain(victim);
    expect(pids).toContain(Number(before[1].pid));
    for (const line of after) {
      const res = await line.call('POST', '/v1/decisions', CALLER, {
        selectors: { tenant: `${run}-k${line.pid}`, route: 'http' },
      });
      expect(res.status).toBe(200);
      line.agent.destroy();
    }
    expect(api.child.exitCode).toBeNull();
  });

  it('stops every process on SIGTERM and exits 0', async () => {
    const lines = await workerLines(2);
    const pids = lines.map((l) => Number(l.pid));
    for (const line of lines) line.agent.destroy();

    api.child.kill('SIGTERM');

    expect(await api.exited).toBe(0);
    await eventually(
      () => pids.filter(alive),
      (left) => left.length === 0,
      {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: 'the workers to exit',
      },
    );
  });
});
