/**
 * A private Jaeger all-in-one (docker/local/stack.sh with STACK_SERVICES=jaeger, its own STACK_DIR
 * and free ports, in-memory storage) as the real trace store of the tracing suite. The binary is
 * built once into .local/jaeger/ (shared by every stack); it is stopped by the pid stack.sh recorded.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@tally/testing';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');

/** One span as Jaeger's query API (`/api/traces/<id>`) answers it. */
export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: readonly { refType: string; traceID: string; spanID: string }[];
  readonly tags: readonly { key: string; type: string; value: unknown }[];
  readonly processID: string;
  /** Filled in by `trace`: the `service.name` of the span's process. */
  service: string;
}

export class PrivateJaeger {
  private constructor(
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    /** OTLP/HTTP base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    readonly otlpEndpoint: string,
    /** Query API and UI. */
    readonly queryUrl: string,
  ) {}

  static async up(): Promise<PrivateJaeger> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-jaeger-'));
    const [otlpHttp, otlpGrpc, query, queryGrpc, health] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env = {
      ...process.env,
      STACK_DIR: dir,
      STACK_SERVICES: 'jaeger',
      JAEGER_OTLP_HTTP_PORT: String(otlpHttp),
      JAEGER_OTLP_GRPC_PORT: String(otlpGrpc),
      JAEGER_QUERY_PORT: String(query),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpc),
      JAEGER_HEALTH_PORT: String(health),
    };
    const jaeger = new PrivateJaeger(dir, env, `http://127.0.0.1:${otlpHttp}`, `http://127.0.0.1:${query}`);
    try {
      await jaeger.script('up');
    } catch (error) {
      await jaeger.down();
      throw error;
    }
    return jaeger;
  }

  /** The spans of one trace (none while Jaeger has none: it answers 404). */
  async trace(traceId: string): Promise<JaegerSpan[]> {
    const res = await fetch(`${this.queryUrl}/api/traces/${traceId}`);
    if (res.status === 404) return [];
    if (!res.ok) throw new Error(`jaeger answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as {
      data: { spans: JaegerSpan[]; processes: Record<string, { serviceName: string }> }[];
    };
    return body.data.flatMap((t) =>
      t.spans.map((span) => ({ ...span, service: t.processes[span.processID]?.serviceName ?? '?' })),
    );
  }

  async down(): Promise<void> {
    await this.script('down').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async script(command: 'up' | 'down'): Promise<void> {
    await run('bash', [join(ROOT, 'docker/local/stack.sh'), command], {
      cwd: ROOT,
      env: this.env,
      maxBuffer: 16 * 1024 * 1024,
    });
  }
}

/** A span's tag value by key. */
export function tagOf(span: JaegerSpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}
