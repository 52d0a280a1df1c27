import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { sampledTraceparent, Tracing } from './tracing';

const CALLER = { trace: '4bf92f3577b34da6a3ce929d0e0e4736', span: '00f067aa0ba902b7' };
const sampled = `00-${CALLER.trace}-${CALLER.span}-01`;
const unsampled = `00-${CALLER.trace}-${CALLER.span}-00`;

/** An OTLP/HTTP receiver: the JSON bodies posted to /v1/traces. */
let server: Server;
let endpoint: string;
const received: { path: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += String(chunk)));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const on = (sampleRatio: number) =>
  Tracing.create({ enabled: true, sampleRatio, endpoint, serviceName: 'tally-test', exportDelayMs: 50 });

describe(Tracing.name, () => {
  it('starts nothing when off', () => {
    const sut = Tracing.off();
    expect(sut.enabled).toBe(false);
    expect(sut.start('x', SpanKind.SERVER, sampled)).toBeUndefined();
    expect(Tracing.create({ enabled: false, sampleRatio: 1, endpoint, serviceName: 's' }).enabled).toBe(
      false,
    );
  });

  it("follows a caller's decision whatever the ratio: sampled is recorded, unsampled is not", async () => {
    const sut = on(0);

    const child = sut.start('tally.decide', SpanKind.SERVER, sampled);
    const dropped = sut.start('tally.decide', SpanKind.SERVER, unsampled);

    expect(child?.spanContext().traceId).toBe(CALLER.trace);
    expect(sampledTraceparent(child)).toMatch(new RegExp(`^00-${CALLER.trace}-[0-9a-f]{16}-01$`));
    expect(sampledTraceparent(child)).not.toContain(CALLER.span);
    expect(sampledTraceparent(dropped)).toBeUndefined();
    child?.end();
    dropped?.end();
    await sut.onApplicationShutdown();
  });

  it('samples new traces at the ratio, and ignores a malformed traceparent', async () => {
    const never = on(0);
    const always = on(1);

    expect(sampledTraceparent(never.start('a', SpanKind.SERVER, undefined))).toBeUndefined();
    expect(sampledTraceparent(never.start('a', SpanKind.SERVER, 'garbage'))).toBeUndefined();
    const root = always.start('a', SpanKind.SERVER, '00-zz-yy-01');
    expect(sampledTraceparent(root)).toBeDefined();
    expect(root?.spanContext().traceId).not.toBe(CALLER.trace);
    root?.end();
    await Promise.all([never.onApplicationShutdown(), always.onApplicationShutdown()]);
  });

  it('exports a recorded span over OTLP/HTTP, with its parent and service name', async () => {
    received.length = 0;
    const sut = on(0);
    const span = sut.start('tally.relay.publish', SpanKind.PRODUCER, sampled);
    span?.setAttribute('tally.decision_id', '01JD0000000000000000000001');
    span?.end();

    await sut.onApplicationShutdown();

    expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
    const body = received[0].body;
    expect(body).toContain('"tally.relay.publish"');
    expect(body).toContain('"tally-test"');
    expect(body).toContain('01JD0000000000000000000001');
    expect(body).toContain(CALLER.span); // the parent span id
  });
});
