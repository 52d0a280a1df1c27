import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata, type CallOptions, type Client, type ServiceError } from '@grpc/grpc-js';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@tally/config';
import { loadRateLimitService, type RlsRequest } from '@tally/envoy-rls';
import { createHttpApp, httpAppOptions } from '@tally/http';
import { createLogger } from '@tally/observability';
import { DecisionApiModule } from '../../../apps/decision-api/src/decision-api.module';
import { GrpcRlsServer } from '../../../apps/decision-api/src/grpc-rls.server';
import { ADMIN_TOKEN, CALLER_TOKEN } from './decision-api.harness';

/** The decoded answer: proto3 leaves zero values out, so `limit_remaining: 0` arrives absent. */
export interface Answer {
  overall_code: string;
  statuses: {
    code: string;
    current_limit?: { name: string; requests_per_unit: number; unit: string };
    limit_remaining?: number;
    duration_until_reset?: { seconds?: number; nanos?: number };
  }[];
  response_headers_to_add?: { key: string; value: string }[];
}

type Unary = (
  request: RlsRequest,
  metadata: Metadata,
  options: CallOptions,
  done: (error: ServiceError | null, answer?: Answer) => void,
) => void;

export interface RlsStackOptions {
  /** Extra `TALLY_*` settings (limits, TLS files, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** A TLS listener: the client trusts exactly this certificate. */
  readonly trustedCert?: Buffer;
}

/**
 * The real DecisionApiModule on Fastify with its gRPC server on an ephemeral port (what main.ts
 * does), and a @grpc/grpc-js client built from the same vendored protos. Only the process boundary
 * and Envoy itself are missing.
 */
export class RlsStack {
  private stopped = false;

  private constructor(
    private readonly app: NestFastifyApplication,
    private readonly client: Client,
    private readonly dir: string,
    readonly httpUrl: string,
    /** `127.0.0.1:<port>` of the gRPC listener. */
    readonly grpcTarget: string,
    /** The certificate the HTTP listener presents too, when the stack runs with TLS. */
    private readonly trustedCert?: Buffer,
  ) {}

  static async start(redisUrl: string, policies: string, options: RlsStackOptions = {}): Promise<RlsStack> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-rls-'));
    await writeFile(join(dir, 'policies.yaml'), policies);
    const config = loadConfig({
      REDIS_URL: redisUrl,
      TALLY_POLICIES: join(dir, 'policies.yaml'),
      TALLY_API_TOKENS: CALLER_TOKEN,
      TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
      TALLY_TOKEN_SECRET: 'e2e-rls-token-secret-0123456789',
      TALLY_LOG_LEVEL: 'error',
      ...options.env,
    });
    const app = await createHttpApp(
      DecisionApiModule.forRoot(config),
      httpAppOptions(config, createLogger('decision-api-rls-e2e', config.logLevel)),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const grpcPort = await app.get(GrpcRlsServer).start('127.0.0.1', 0);
    const address = app.getHttpServer().address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const target = `127.0.0.1:${grpcPort}`;
    const client = RlsStack.client(target, options.trustedCert);
    const scheme = options.trustedCert ? 'https' : 'http';
    return new RlsStack(
      app,
      client,
      dir,
      `${scheme}://127.0.0.1:${address.port}`,
      target,
      options.trustedCert,
    );
  }

  /**
   * A client of its own (own channel, own connection): plaintext, or TLS trusting `cert` and checking
   * the server's name against `localhost` (an IP is not a TLS server name).
   */
  static client(target: string, cert?: Buffer): Client {
    const { Client: RlsClient } = loadRateLimitService();
    if (!cert) return new RlsClient(target, credentials.createInsecure());
    return new RlsClient(target, credentials.createSsl(cert), {
      'grpc.ssl_target_name_override': 'localhost',
    });
  }

  get channel(): ReturnType<Client['getChannel']> {
    return this.client.getChannel();
  }

  /** `ShouldRateLimit` with the caller token unless told otherwise (`null`: no metadata). */
  call(request: RlsRequest, token: string | null = CALLER_TOKEN, client = this.client): Promise<Answer> {
    const metadata = new Metadata();
    if (token !== null) metadata.set('authorization', `Bearer ${token}`);
    const method = (client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(client);
    // A deadline, so that a call the server never answers fails the test instead of hanging it.
    const options = { deadline: Date.now() + 30_000 };
    return new Promise((resolve, reject) =>
      method(request, metadata, options, (error, answer) =>
        error ? reject(error) : resolve(answer as Answer),
      ),
    );
  }

  /**
   * `ShouldRateLimit` with the caller token and `extra` metadata: the `x-request-id` of the answer's
   * initial metadata, and how the call ended (the gRPC status code; 0 = OK).
   */
  echoedRequestId(
    request: RlsRequest,
    extra: Readonly<Record<string, string>> = {},
  ): Promise<{ requestId: string | undefined; code: number }> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${CALLER_TOKEN}`);
    for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
    const method = (this.client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(this.client);
    let requestId: string | undefined;
    return new Promise((resolve) => {
      const call = method(request, metadata, { deadline: Date.now() + 30_000 }, (error) =>
        resolve({ requestId, code: error?.code ?? 0 }),
      ) as unknown as { on(event: 'metadata', listener: (m: Metadata) => void): void };
      call.on('metadata', (m) => (requestId = m.get('x-request-id')[0] as string | undefined));
    });
  }

  /**
   * `count` calls, each cancelled by the client `afterMs` after it was started (0: in the next turn),
   * most of them while their decision is in flight; resolves with how each ended (gRPC status codes).
   */
  cancelledCalls(request: RlsRequest, count: number, afterMs: number): Promise<number[]> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${CALLER_TOKEN}`);
    const method = (this.client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(this.client);
    const calls = Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve) => {
          const call = method(request, metadata, { deadline: Date.now() + 30_000 }, (error) =>
            resolve(error?.code ?? 0),
          ) as unknown as { cancel(): void };
          if (afterMs === 0) setImmediate(() => call.cancel());
          else setTimeout(() => call.cancel(), afterMs);
        }),
    );
    return Promise.all(calls);
  }

  /** The gRPC error of a call that must fail. */
  async failure(request: RlsRequest, token: string | null = CALLER_TOKEN, client = this.client) {
    return RlsStack.errorOf(this.call(request, token, client));
  }

  /** The gRPC error a pending call ends with. */
  static async errorOf(pending: Promise<Answer>): Promise<ServiceError> {
    try {
      const answer = await pending;
      throw new Error(`expected a gRPC error, got ${JSON.stringify(answer)}`);
    } catch (error) {
      if ((error as Partial<ServiceError>).code === undefined) throw error;
      return error as ServiceError;
    }
  }

  async readiness(): Promise<{
    status: string;
    components: Record<string, { status: string; detail?: string }>;
  }> {
    // With the admin token, so components carry their detail; over HTTPS when the listeners serve TLS
    // (both share TALLY_TLS_CERT), trusting the stack's own certificate.
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const text = this.trustedCert
      ? await new Promise<string>((resolve, reject) => {
          const req = httpsGet(
            `${this.httpUrl}/readyz`,
            { headers, ca: this.trustedCert, servername: 'localhost' },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (body += chunk));
              res.on('end', () => resolve(body));
            },
          );
          req.on('error', reject);
        })
      : await (await fetch(`${this.httpUrl}/readyz`, { headers })).text();
    return JSON.parse(text) as {
      status: string;
      components: Record<string, { status: string; detail?: string }>;
    };
  }

  /** The value of one series of `/metrics` (0 when it has not been written yet). */
  async metric(name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const text = await (await fetch(`${this.httpUrl}/metrics`)).text();
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    for (const line of text.split('\n')) {
      const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const present = (match[2] ?? '').split(',');
      if (wanted.every((w) => present.includes(w))) return Number(match[3]);
    }
    return 0;
  }

  /** The app's own shutdown (what SIGTERM runs); the client stays open to see the server gone. */
  async stopApp(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.app.close();
  }

  async close(): Promise<void> {
    await this.stopApp();
    this.client.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}
