import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@tally/config';
import { type DecisionBody as WireDecisionBody } from '@tally/api-contract';
import { createHttpApp, httpAppOptions } from '@tally/http';
import { createLogger } from '@tally/observability';
import { DecisionApiModule } from '../../../apps/decision-api/src/decision-api.module';
import { GrpcRlsServer } from '../../../apps/decision-api/src/grpc-rls.server';
import { OpenApiContract } from './openapi-contract';

/** Tokens of every harness; long enough for the config's 16-character minimum. */
export const CALLER_TOKEN = 'e2e-caller-token-0123456789';
export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';
const TOKEN_SECRET = 'e2e-token-secret-0123456789';

/** A decision id (ULID, Crockford base 32). */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The JSON body of a decision, as the contract defines it. */
export type DecisionBody = WireDecisionBody;

export interface HarnessOptions {
  /** The policy file's text. */
  readonly policies: string;
  readonly redisUrl: string;
  /** Extra `TALLY_*` settings (body limit, max in flight, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Check every answer of a documented operation against the API's served OpenAPI document. */
  readonly contract?: boolean;
}

export interface CallOptions {
  /** JSON-encoded unless `raw` is given. */
  readonly body?: unknown;
  /** Sent as is (malformed JSON, empty bodies); wins over `body`. */
  readonly raw?: string;
  /** Bearer token; `null` sends no Authorization header. Default: the caller token. */
  readonly token?: string | null;
  readonly contentType?: string;
}

export interface HttpResult<T = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  readonly body: T;
}

/**
 * The real decision API in this process: `DecisionApiModule` on Fastify, exactly as `main.ts` builds
 * it, listening on an ephemeral port, against the real Redis, with its policy file in a temp folder of
 * its own. Real HTTP (fetch), real Redis: only the process boundary is missing.
 */
export class DecisionApiHarness {
  private contract?: OpenApiContract;

  private constructor(
    /** The app itself, for suites that drive its lifecycle (closing under load). */
    readonly app: NestFastifyApplication,
    private readonly dir: string,
    readonly policyPath: string,
    readonly baseUrl: string,
  ) {}

  static async start(options: HarnessOptions): Promise<DecisionApiHarness> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-e2e-'));
    const policyPath = join(dir, 'policies.yaml');
    await writeFile(policyPath, options.policies);
    const config = loadConfig({
      REDIS_URL: options.redisUrl,
      TALLY_POLICIES: policyPath,
      TALLY_API_TOKENS: CALLER_TOKEN,
      TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
      TALLY_TOKEN_SECRET: TOKEN_SECRET,
      TALLY_LOG_LEVEL: 'error',
      ...options.env,
    });
    const app = await createHttpApp(
      DecisionApiModule.forRoot(config),
      httpAppOptions(config, createLogger('decision-api-e2e', config.logLevel)),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const scheme = config.tlsCertPath === undefined ? 'http' : 'https';
    const harness = new DecisionApiHarness(app, dir, policyPath, `${scheme}://127.0.0.1:${address.port}`);
    if (options.contract) harness.contract = await OpenApiContract.fetch(harness.baseUrl);
    return harness;
  }

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: CallOptions = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? CALLER_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = options.raw;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined || options.contentType !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    const json = (response.headers.get('content-type') ?? '').includes('application/json');
    const result = {
      status: response.status,
      headers: response.headers,
      body: (json && text !== '' ? JSON.parse(text) : text) as T,
    };
    const template = this.contract?.templateOf(method, path);
    if (template !== undefined) this.contract?.expectConforms(method, template, result);
    return result;
  }

  decide<T = Record<string, unknown>>(body: unknown, options: CallOptions = {}): Promise<HttpResult<T>> {
    return this.call<T>('POST', '/v1/decisions', { ...options, body });
  }

  /** `GET /v1/policies/{name}/state` with the admin token; the window remainders by name. */
  async remaining(
    policy: string,
    selectors: Readonly<Record<string, string>>,
  ): Promise<Record<string, number>> {
    const query = new URLSearchParams(selectors).toString();
    const res = await this.call<{ windows: { name: string; remaining: number }[] }>(
      'GET',
      `/v1/policies/${encodeURIComponent(policy)}/state?${query}`,
      { token: ADMIN_TOKEN },
    );
    if (res.status !== 200) throw new Error(`state of ${policy}: ${res.status} ${JSON.stringify(res.body)}`);
    return Object.fromEntries(res.body.windows.map((w) => [w.name, w.remaining]));
  }

  /** Replaces the policy file the way deploy tools do (write aside, rename over), which the watcher sees. */
  async writePolicies(text: string): Promise<void> {
    const aside = join(this.dir, `.policies.${randomBytes(3).toString('hex')}.tmp`);
    await writeFile(aside, text);
    await rename(aside, this.policyPath);
  }

  reload(): Promise<HttpResult> {
    return this.call('POST', '/v1/policies:reload', { token: ADMIN_TOKEN });
  }

  /** What main.ts does after listening: the Envoy RLS gRPC server, here on a free port (returned). */
  startGrpc(): Promise<number> {
    return this.app.get(GrpcRlsServer).start('127.0.0.1', 0);
  }

  async metrics(): Promise<string> {
    const res = await this.call<string>('GET', '/metrics', { token: null });
    if (res.status !== 200) throw new Error(`metrics: ${res.status}`);
    return res.body;
  }

  async close(): Promise<void> {
    await this.app.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The sum of the Prometheus samples of `name` whose labels include all of `labels` (0 when none). */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const labelText = line.slice(name.length + 1, close);
    const has = Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`));
    if (has) total += Number(line.slice(close + 1).trim());
  }
  return total;
}
