/**
 * One trace from the request to the ledger, against a REAL trace store: the built decision-api,
 * relay and projector as separate processes (private Redis and Kafka, PrivateStack), tracing on with
 * a sample ratio of 0 (so only a caller's sampled `traceparent` records anything), exporting over
 * OTLP/HTTP to a private Jaeger all-in-one (its query API is what the test reads):
 * - a sampled HTTP decision and a sampled gRPC `ShouldRateLimit` are each one trace: the decision
 *   API's span (child of the caller's), the relay's (child of it) and the projector's (child of
 *   the relay's), with the request id and decision id on the decision span;
 * - an unsampled `traceparent` (flags 00) leaves no trace, checked once a later sampled decision
 *   of the same tenant (same partition, so projected after it) has its whole trace;
 * - the request id: echoed when safe, replaced when not, made when absent (HTTP header, gRPC metadata).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadRateLimitService, type RlsRequest } from '@tally/envoy-rls';
import { buildTree, eventually, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateJaeger, tagOf, type JaegerSpan } from './support/jaeger.harness';
import { AppProcess, CALLER_TOKEN, type AppEnv } from './support/ledger-apps.harness';
import { PrivateStack } from './support/ledger-stack.harness';

const run = uniqueName('tracing');
const out = resolve(__dirname, '../../.local', run);
const TENANT = `${run}-acme`;
const POLICIES = `
policies:
  - name: traced
    match: { route: traced }
    key: [tenant]
    windows:
      - { name: minute, role: sustained, algorithm: fixed_window, limit: 1000, period: 1m }
`;
/** The BatchSpanProcessor exports every 5 s; three processes, Kafka and a busy machine in between. */
const TRACE_DEADLINE = { timeoutMs: 90_000, intervalMs: 250 } as const;

let stack: PrivateStack;
let jaeger: PrivateJaeger;
const apps: AppProcess[] = [];
let api: AppProcess;

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const caller = (sampled: boolean) => {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
};

async function decide(
  headers: Record<string, string>,
): Promise<{ status: number; id: string; requestId: string | null }> {
  const res = await fetch(`${api.baseUrl}/v1/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CALLER_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ selectors: { tenant: TENANT, route: 'traced' }, cost: 1 }),
  });
  const body = (await res.json()) as { decision_id: string };
  return { status: res.status, id: body.decision_id, requestId: res.headers.get('x-request-id') };
}

function rls(
  request: RlsRequest,
  extra: Record<string, string>,
): Promise<{ code?: string; requestId: unknown }> {
  const { Client } = loadRateLimitService();
  const client = new Client(api.grpcAddress, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${CALLER_TOKEN}`);
  for (const [k, v] of Object.entries(extra)) metadata.set(k, v);
  let requestId: unknown;
  type Unary = (
    r: RlsRequest,
    m: Metadata,
    done: (e: ServiceError | null, a?: { overall_code?: string }) => void,
  ) => { on(event: 'metadata', listener: (m: Metadata) => void): void };
  const call = (client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(client);
  return new Promise<{ code?: string; requestId: unknown }>((done, fail) => {
    const pending = call(request, metadata, (error, answer) =>
      error ? fail(error) : done({ code: answer?.overall_code, requestId }),
    );
    pending.on('metadata', (m) => (requestId = m.get('x-request-id')[0]));
  }).finally(() => client.close());
}

/** The trace once it holds a span of each of the three apps. */
function wholeTrace(traceId: string): Promise<JaegerSpan[]> {
  return eventually(
    () => jaeger.trace(traceId),
    (spans) =>
      ['tally-decision-api', 'tally-relay', 'tally-projector'].every((s) =>
        spans.some((x) => x.service === s),
      ),
    {
      ...TRACE_DEADLINE,
      what: `trace ${traceId} with spans of the decision API, the relay and the projector`,
    },
  );
}

function only(spans: readonly JaegerSpan[], service: string, operation: string): JaegerSpan {
  const found = spans.filter((s) => s.service === service && s.operationName === operation);
  expect(found, `${service} ${operation} spans`).toHaveLength(1);
  return found[0];
}

function parentOf(span: JaegerSpan): string | undefined {
  return span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
}

/** decide → relay → projector under one trace id, each the child of the one before. */
function expectChain(spans: readonly JaegerSpan[], callerSpan: string): JaegerSpan {
  const decision = only(spans, 'tally-decision-api', 'tally.decide');
  const relay = only(spans, 'tally-relay', 'tally.relay.publish');
  const projector = only(spans, 'tally-projector', 'tally.projector.project');
  expect(parentOf(decision)).toBe(callerSpan);
  expect(parentOf(relay)).toBe(decision.spanID);
  expect(parentOf(projector)).toBe(relay.spanID);
  expect(tagOf(relay, 'tally.decision_id')).toBe(tagOf(projector, 'tally.decision_id'));
  return decision;
}

beforeAll(async () => {
  await mkdir(out, { recursive: true });
  // Jaeger's first start on a machine compiles it (minutes); later runs reuse the binary.
  [stack, jaeger] = await Promise.all([
    PrivateStack.up(),
    PrivateJaeger.up(),
    buildTree(out, ['decision-api', 'relay', 'projector']),
  ]);
  const policiesPath = join(stack.dir, 'policies.yaml');
  await writeFile(policiesPath, POLICIES);
  const env: AppEnv = {
    out,
    redisUrl: stack.redisUrl,
    brokers: stack.brokers,
    policiesPath,
    extraEnv: {
      TALLY_TRACING: 'on',
      // Only callers' sampled contexts are recorded: every trace in Jaeger is one this test made.
      TALLY_TRACE_SAMPLE_RATIO: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    },
  };
  for (const kind of ['decision-api', 'relay', 'projector'] as const)
    apps.push(await AppProcess.start(kind, env));
  api = apps[0];
}, 30 * 60_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.kill('SIGKILL')));
  await jaeger?.down();
  await stack?.down();
  await rm(out, { recursive: true, force: true });
}, 120_000);

describe('tracing (built apps, private Redis, Kafka and Jaeger)', () => {
  it('makes one sampled HTTP decision one trace across the decision API, the relay and the projector', async () => {
    // given a caller's sampled context and its request id
    const ctx = caller(true);
    const requestId = `${run}-http`;

    // when it asks for a decision
    const answer = await decide({ traceparent: ctx.traceparent, 'x-request-id': requestId });

    // then the answer echoes the request id, and the trace holds the three spans, parent to child
    expect([answer.status, answer.requestId]).toEqual([200, requestId]);
    const spans = await wholeTrace(ctx.traceId);
    expect(new Set(spans.map((s) => s.traceID))).toEqual(new Set([ctx.traceId]));
    const decision = expectChain(spans, ctx.spanId);
    expect(tagOf(decision, 'tally.request_id')).toBe(requestId);
    expect(tagOf(decision, 'tally.decision_id')).toBe(answer.id);
    expect(tagOf(decision, 'tally.tenant')).toBe(TENANT);
    expect(tagOf(decision, 'tally.outcome')).toBe('allowed');
    expect(tagOf(decision, 'tally.transport')).toBe('http');
  });

  it('makes one sampled Envoy RLS call one trace too, and echoes its request id in the metadata', async () => {
    const ctx = caller(true);
    const requestId = `${run}-grpc`;
    const answer = await rls(
      {
        domain: 'edge',
        descriptors: [
          {
            entries: [
              { key: 'tenant', value: TENANT },
              { key: 'route', value: 'traced' },
            ],
          },
        ],
      },
      { traceparent: ctx.traceparent, 'x-request-id': requestId },
    );
    expect(answer).toEqual({ code: 'OK', requestId });
    const decision = expectChain(await wholeTrace(ctx.traceId), ctx.spanId);
    expect(tagOf(decision, 'tally.transport')).toBe('grpc');
    expect(tagOf(decision, 'tally.request_id')).toBe(requestId);
  });

  it('records nothing of a decision whose caller did not sample it', async () => {
    // given an unsampled decision, then a sampled one of the same tenant (same partition, after it)
    const unsampled = caller(false);
    expect((await decide({ traceparent: unsampled.traceparent })).status).toBe(200);
    const later = caller(true);
    expect((await decide({ traceparent: later.traceparent })).status).toBe(200);

    // when the later one has gone all the way through (so the unsampled one has too)
    await wholeTrace(later.traceId);

    // then Jaeger has nothing of the unsampled one
    expect(await jaeger.trace(unsampled.traceId)).toEqual([]);
  });

  it('echoes a safe request id, and replaces an unsafe or missing one with one of its own', async () => {
    const made = /^[0-9a-f]{12}-[0-9a-z]+$/;
    expect((await decide({ 'x-request-id': 'abc-123' })).requestId).toBe('abc-123');
    const unsafe = await decide({ 'x-request-id': 'x'.repeat(129) });
    expect(unsafe.requestId).toMatch(made);
    const missing = await decide({});
    expect(missing.requestId).toMatch(made);
    expect(missing.requestId).not.toBe(unsafe.requestId);
    // refusals carry it too (the route gate answers before the body is read)
    const refused = await fetch(`${api.baseUrl}/v1/decisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'refused-1' },
      body: '{}',
    });
    expect([refused.status, refused.headers.get('x-request-id')]).toEqual([401, 'refused-1']);
  });
});
