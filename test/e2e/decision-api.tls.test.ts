/**
 * TLS on the HTTP listener: the built decision API (`node dist/apps/decision-api/src/main.js`, compiled
 * by this suite into a private folder) started with `TALLY_TLS_CERT` / `TALLY_TLS_KEY` pointing at a
 * certificate this suite makes with openssl (no key is ever committed), answering a real HTTPS decision
 * against the real Redis; plain HTTP on the same port gets no answer; and a bad TLS setting stops the
 * process at boot (exit 2) with a line naming it, before anything listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type TLSSocket } from 'node:tls';
import {
  buildTree,
  eventually,
  freePort,
  makeSelfSignedCert,
  type SelfSignedCert,
  uniqueName,
} from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = resolve(__dirname, '../..');
const run = uniqueName('e2e-tls');
const out = join(root, '.local', run);
const dir = mkdtempSync(join(tmpdir(), 'tally-tls-'));
const CALLER_TOKEN = 'tls-e2e-caller-token-0123456789';
const POLICY = `${run}-p`;

interface Started {
  readonly child: ChildProcess;
  readonly port: number;
  readonly stderr: string[];
  readonly exited: Promise<number | null>;
}

/** A certificate made for this run (libs/testing), as the two paths the settings take. */
const certificates: SelfSignedCert[] = [];
function makeCertificate(): { cert: string; key: string } {
  const made = makeSelfSignedCert();
  certificates.push(made);
  return { cert: made.certPath, key: made.keyPath };
}

async function startApi(env: Readonly<Record<string, string>>): Promise<Started> {
  const [port, grpcPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(out, 'apps/decision-api/src/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      REDIS_URL: inject('redisUrl'),
      TALLY_POLICIES: join(dir, 'policies.yaml'),
      TALLY_API_TOKENS: CALLER_TOKEN,
      TALLY_ADMIN_TOKEN: 'tls-e2e-admin-token-0123456789',
      TALLY_TOKEN_SECRET: 'tls-e2e-token-secret-0123456789',
      TALLY_LOG_LEVEL: 'warn',
      // One process: the suite's assertions (one pid, its metrics) are about a single worker.
      TALLY_WORKERS: '1',
      TALLY_HTTP_PORT: String(port),
      TALLY_GRPC_PORT: String(grpcPort),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(String(d)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, port, stderr, exited };
}

interface HttpsAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** SHA-256 fingerprint of the certificate the server presented. */
  readonly peer: string;
}

function httpsCall(
  port: number,
  ca: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpsAnswer> {
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        ca,
        headers: {
          authorization: `Bearer ${CALLER_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        timeout: 5_000,
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, peer }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 5 s')));
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** What a plain-text HTTP request to the port gets back before the connection ends. */
function plainHttp(port: number): Promise<string> {
  return new Promise((done) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => done(received));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

let api: Started | undefined;
let tls: { cert: string; key: string };

beforeAll(async () => {
  writeFileSync(
    join(dir, 'policies.yaml'),
    `policies:
  - name: ${POLICY}
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
`,
  );
  tls = makeCertificate();
  await buildTree(out, ['decision-api']);
});

afterAll(async () => {
  if (api && api.child.exitCode === null) {
    api.child.kill('SIGTERM');
    await api.exited;
  }
  rmSync(out, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
  for (const c of certificates) c.remove();
});

describe('decision-api over TLS', () => {
  it('answers a real HTTPS decision with the configured certificate', async () => {
    // given the decision API started with a certificate and its key
    api = await startApi({ TALLY_TLS_CERT: tls.cert, TALLY_TLS_KEY: tls.key });
    const ca = readFileSync(tls.cert, 'utf8');
    const started = api;
    await eventually(
      () => httpsCall(started.port, ca, 'GET', '/healthz').catch(() => null),
      (res) => res?.status === 200 || started.child.exitCode !== null,
      { timeoutMs: 60_000, intervalMs: 200, what: 'the HTTPS listener' },
    );
    expect(api.child.exitCode, api.stderr.join('')).toBeNull();

    // when a caller asks over HTTPS, trusting only that certificate
    const res = await httpsCall(api.port, ca, 'POST', '/v1/decisions', { selectors: { tenant: run } });

    // then it is decided, by a server that presented exactly that certificate
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allowed: true, code: null });
    expect(res.peer).toBe(new X509Certificate(readFileSync(tls.cert)).fingerprint256);
  });

  it('gives plain HTTP on the TLS port no HTTP answer', async () => {
    expect(api, 'the TLS listener of the previous test').toBeDefined();

    const received = await plainHttp(api!.port);

    expect(received).not.toMatch(/^HTTP\/1\.[01] /);
  });
});

describe('decision-api with a bad TLS setting', () => {
  const other = (): { cert: string; key: string } => makeCertificate();

  it.each([
    [
      'a certificate without its key',
      (): Record<string, string> => ({ TALLY_TLS_CERT: tls.cert }),
      'TALLY_TLS_KEY: required when TALLY_TLS_CERT is set (both or neither)',
    ],
    [
      'a key file that does not exist',
      (): Record<string, string> => ({ TALLY_TLS_CERT: tls.cert, TALLY_TLS_KEY: join(dir, 'missing.key') }),
      `TALLY_TLS_KEY: cannot read the file (ENOENT) (got "${join(dir, 'missing.key')}")`,
    ],
    [
      'a certificate file that is not PEM',
      (): Record<string, string> => ({ TALLY_TLS_CERT: join(dir, 'policies.yaml'), TALLY_TLS_KEY: tls.key }),
      `TALLY_TLS_CERT: must be a PEM certificate file (got "${join(dir, 'policies.yaml')}")`,
    ],
    [
      'the key of another certificate',
      (): Record<string, string> => ({ TALLY_TLS_CERT: tls.cert, TALLY_TLS_KEY: other().key }),
      'TALLY_TLS_KEY: is not the private key of TALLY_TLS_CERT (got ',
    ],
  ])('refuses %s at boot, naming the setting (exit 2)', async (_name, env, line) => {
    const started = await startApi(env());

    const code = await started.exited;

    expect(code).toBe(2);
    expect(started.stderr.join('')).toContain(line);
  });
});
