/**
 * The limits of Envoy's rate-limit gRPC listener end to end (docs/envoy.md, "Limits" and "TLS"):
 * message size, descriptor caps, authentication before the request is read, the in-flight limit, the
 * read deadline, idle connections and TLS. Real: the DecisionApiModule with its gRPC server, a
 * @grpc/grpc-js client (and a raw HTTP/2 client where a grpc-js client cannot misbehave), real Redis
 * (the shared one, or a redis-server of this suite alone where it is paused). Whether a refused call
 * was read is proven by the server's own counter of decoded requests, never by timing.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { connectivityState, status, type Client } from '@grpc/grpc-js';
import { MAX_DESCRIPTOR_ENTRIES, type RlsDescriptor, type RlsRequest } from '@tally/envoy-rls';
import {
  eventually,
  makeSelfSignedCert,
  PrivateRedis,
  uniqueName,
  type SelfSignedCert,
} from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CALLER_TOKEN } from './support/decision-api.harness';
import { RlsStack, type Answer } from './support/rls-stack.harness';

const run = uniqueName('e2e-rls-limits');
const DOMAIN = `${run}-edge`;
const POLICY = `${run}-api`;
const POLICIES = `
policies:
  - name: ${POLICY}
    match: { domain: ${DOMAIN}, route: api }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
`;
const POLL = { timeoutMs: 15_000, intervalMs: 25 } as const;
const DECODED = 'tally_grpc_requests_decoded_total';
const REFUSED = 'tally_grpc_refused_total';

const descriptor = (tenant: string, cost?: number): RlsDescriptor => ({
  entries: [
    { key: 'tenant', value: tenant },
    { key: 'route', value: 'api' },
  ],
  ...(cost !== undefined && { hits_addend: { value: cost } }),
});
const request = (...descriptors: RlsDescriptor[]): RlsRequest => ({ domain: DOMAIN, descriptors });
/** Cost 0: reports what is left, spends nothing. */
const peek = (tenant: string): RlsRequest => request(descriptor(tenant, 0));
const remaining = (answer: Answer): number[] => answer.statuses.map((s) => s.limit_remaining ?? 0);

describe('Envoy RLS limits', () => {
  let sut: RlsStack;

  beforeAll(async () => {
    sut = await RlsStack.start(inject('redisUrl'), POLICIES, {
      env: { TALLY_GRPC_READ_TIMEOUT: '3s', TALLY_GRPC_MAX_CONNECTION_IDLE: '1s' },
    });
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('refuses a message above TALLY_GRPC_MAX_MESSAGE_BYTES (64 KiB) with RESOURCE_EXHAUSTED, undecoded, and stays healthy', async () => {
    // given: one descriptor whose attribute value alone is 70,000 bytes
    const tenant = uniqueName('acme');
    const oversize = request({
      entries: [...descriptor(tenant).entries!, { key: 'blob', value: 'x'.repeat(70_000) }],
    });
    const decodedBefore = await sut.metric(DECODED);

    const error = await sut.failure(oversize);
    const decodedAfter = await sut.metric(DECODED);
    const next = await sut.call(peek(tenant));

    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(decodedAfter).toBe(decodedBefore);
    expect(remaining(next)).toEqual([10]);
    expect((await sut.readiness()).status).toBe('healthy');
  });

  it('refuses more than TALLY_GRPC_MAX_DESCRIPTORS (64) descriptors with INVALID_ARGUMENT, consuming nothing', async () => {
    const tenant = uniqueName('acme');

    const error = await sut.failure(request(...Array.from({ length: 65 }, () => descriptor(tenant))));
    const atTheCap = await sut.call(request(...Array.from({ length: 64 }, () => descriptor(tenant, 0))));

    expect([error.code, error.details]).toEqual([
      status.INVALID_ARGUMENT,
      'descriptors: at most 64 descriptors per request',
    ]);
    expect(atTheCap.statuses).toHaveLength(64);
    expect(remaining(atTheCap)).toEqual(Array.from({ length: 64 }, () => 10));
  });

  it('refuses a descriptor with more entries than selector dims and attributes together', async () => {
    const tenant = uniqueName('acme');
    const entries = Array.from({ length: MAX_DESCRIPTOR_ENTRIES - 1 }, (_, i) => ({
      key: `a${i}`,
      value: 'v',
    }));

    const error = await sut.failure(
      request(descriptor(tenant), { entries: [...descriptor(tenant).entries!, ...entries] }),
    );
    const after = await sut.call(peek(tenant));

    expect([error.code, error.details]).toEqual([
      status.INVALID_ARGUMENT,
      `descriptors[1].entries: at most ${MAX_DESCRIPTOR_ENTRIES} entries per descriptor`,
    ]);
    expect(remaining(after)).toEqual([10]);
  });

  it('refuses an unauthenticated call from its metadata, without reading its request, however large', async () => {
    // given: 1,000 descriptors (which, read, would be refused for their number) and 20,000 (380 KB,
    // which, read, would be refused for their size)
    const tenant = uniqueName('acme');
    const many = request(...Array.from({ length: 1_000 }, () => descriptor(tenant)));
    const huge = request(...Array.from({ length: 20_000 }, () => descriptor(tenant)));
    const decodedBefore = await sut.metric(DECODED);
    const refusedBefore = await sut.metric(REFUSED, { reason: 'unauthenticated' });

    const errors = [await sut.failure(many, null), await sut.failure(huge, 'not-a-token-of-this-stack')];
    const decodedAfter = await sut.metric(DECODED);
    const refusedAfter = await sut.metric(REFUSED, { reason: 'unauthenticated' });
    const after = await sut.call(peek(tenant));

    expect(errors.map((e) => e.code)).toEqual([status.UNAUTHENTICATED, status.UNAUTHENTICATED]);
    expect(decodedAfter).toBe(decodedBefore);
    expect(refusedAfter).toBe(refusedBefore + 2);
    // the control: an authenticated call is decoded and counted
    expect(await sut.metric(DECODED)).toBe(decodedAfter + 1);
    expect(remaining(after)).toEqual([10]);
  });

  it('ends an admitted call that stalls mid-request after TALLY_GRPC_READ_TIMEOUT, giving its slot back', async () => {
    // given: a raw HTTP/2 call with a valid token that announces a 100-byte message and sends 10
    const session = connect(`http://${sut.grpcTarget}`);
    try {
      const readTimeoutsBefore = await sut.metric(REFUSED, { reason: 'read_timeout' });
      const answer = grpcStatusOf(session, Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.alloc(10)]));

      // then: it holds a slot while stalled …
      await eventually(
        () => sut.metric('tally_grpc_inflight'),
        (n) => n === 1,
        { ...POLL, what: 'the stalled call in flight' },
      );
      // … and is ended by the server with DEADLINE_EXCEEDED, slot released
      expect(await answer).toBe(String(status.DEADLINE_EXCEEDED));
      await eventually(
        () => sut.metric('tally_grpc_inflight'),
        (n) => n === 0,
        { ...POLL, what: 'the slot back' },
      );
      expect(await sut.metric(REFUSED, { reason: 'read_timeout' })).toBe(readTimeoutsBefore + 1);
    } finally {
      session.destroy();
    }
  });

  it('closes a connection idle for TALLY_GRPC_MAX_CONNECTION_IDLE (1s): the channel leaves READY', async () => {
    // given: a client of its own, connected by one call
    const client = RlsStack.client(sut.grpcTarget);
    try {
      await sut.call(peek(uniqueName('acme')), CALLER_TOKEN, client);
      const channel = client.getChannel();
      expect(channel.getConnectivityState(false)).toBe(connectivityState.READY);
      const readyAt = performance.now();

      // when: nothing is sent; the server's GOAWAY moves the channel out of READY (deadline 15 s)
      await new Promise<void>((resolve, reject) =>
        channel.watchConnectivityState(connectivityState.READY, Date.now() + 15_000, (error) =>
          error ? reject(error) : resolve(),
        ),
      );

      // then: idle (a new call would reconnect), and not before the idle time had passed
      expect(channel.getConnectivityState(false)).toBe(connectivityState.IDLE);
      expect(performance.now() - readyAt).toBeGreaterThanOrEqual(900);
    } finally {
      client.close();
    }
  });
});

describe('Envoy RLS in-flight limit (TALLY_MAX_INFLIGHT=1, writes held by CLIENT PAUSE)', () => {
  let redis: PrivateRedis;
  let sut: RlsStack;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    // A Redis step may wait for as long as the pause lasts, so a call stays in flight until it ends.
    sut = await RlsStack.start(redis.url, POLICIES, {
      env: { TALLY_MAX_INFLIGHT: '1', TALLY_BACKEND_TIMEOUT_MS: '60000' },
    });
  });
  afterAll(async () => {
    await redis?.client.call('CLIENT', 'UNPAUSE');
    await sut?.close();
    await redis?.stop();
  });

  it('sheds a call above the limit with UNAVAILABLE server.overloaded at once; the shed call consumes nothing', async () => {
    // given: the script loaded and the connection up, then Redis holding every write (EVALSHA included)
    const tenant = uniqueName('acme');
    await sut.call(request(descriptor(tenant)));
    await redis.client.call('CLIENT', 'PAUSE', '30000', 'WRITE');
    const held = sut.call(request(descriptor(tenant)));
    await eventually(
      () => sut.metric('tally_grpc_inflight'),
      (n) => n === 1,
      { ...POLL, what: 'one call in flight' },
    );

    // when: another caller with a token, and a stranger without one
    const shed = await sut.failure(request(descriptor(tenant)));
    const stranger = await sut.failure(request(descriptor(tenant)), null);
    await redis.client.call('CLIENT', 'UNPAUSE');
    const answered = await held;
    const after = await sut.call(peek(tenant));

    // then: shed with the overload code (the stranger is refused for its token, never shed); only the
    // warm-up call and the held one were charged
    expect([shed.code, shed.details]).toEqual([
      status.UNAVAILABLE,
      'server.overloaded: too many calls in flight; retry shortly',
    ]);
    expect(stranger.code).toBe(status.UNAUTHENTICATED);
    expect(remaining(answered)).toEqual([8]);
    expect(remaining(after)).toEqual([8]);
    expect(await sut.metric(REFUSED, { reason: 'overloaded' })).toBe(1);
    expect(await sut.metric('tally_grpc_inflight')).toBe(0);
  });
});

describe('Envoy RLS over TLS (TALLY_TLS_CERT / TALLY_TLS_KEY)', () => {
  let cert: SelfSignedCert;
  let stranger: SelfSignedCert;
  let sut: RlsStack;
  const clients: Client[] = [];

  beforeAll(async () => {
    cert = makeSelfSignedCert();
    stranger = makeSelfSignedCert();
    sut = await RlsStack.start(inject('redisUrl'), POLICIES, {
      env: { TALLY_TLS_CERT: cert.certPath, TALLY_TLS_KEY: cert.keyPath },
      trustedCert: cert.certPem,
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await sut?.close();
    cert?.remove();
    stranger?.remove();
  });

  it('answers a call over TLS, and says so in readiness', async () => {
    const tenant = uniqueName('acme');

    const answer = await sut.call(request(descriptor(tenant)));
    const ready = await sut.readiness();

    expect(answer.overall_code).toBe('OK');
    expect(remaining(answer)).toEqual([9]);
    expect(ready.components.grpc).toMatchObject({ status: 'up', detail: expect.stringMatching(/, TLS$/) });
  });

  it.each([
    ['a plaintext client', () => RlsStack.client(sut.grpcTarget)],
    ['a client that trusts another certificate', () => RlsStack.client(sut.grpcTarget, stranger.certPem)],
  ])('refuses %s (UNAVAILABLE: no connection), consuming nothing', async (_case, make) => {
    const tenant = uniqueName('acme');
    const client = make();
    clients.push(client);

    const error = await sut.failure(request(descriptor(tenant)), CALLER_TOKEN, client);
    const after = await sut.call(peek(tenant));

    expect(error.code).toBe(status.UNAVAILABLE);
    expect(remaining(after)).toEqual([10]);
  });
});

/**
 * Opens a `ShouldRateLimit` stream by hand with the caller token, writes `body` without ending the
 * request, and resolves with the `grpc-status` the server ends it with.
 */
function grpcStatusOf(session: ClientHttp2Session, body: Buffer): Promise<string> {
  const stream = session.request({
    ':method': 'POST',
    ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    'content-type': 'application/grpc',
    te: 'trailers',
    authorization: `Bearer ${CALLER_TOKEN}`,
  });
  stream.write(body);
  return new Promise((resolve, reject) => {
    const statusIn = (headers: IncomingHttpHeaders): void => {
      const value = headers['grpc-status'];
      if (typeof value === 'string') resolve(value);
    };
    stream.on('response', statusIn);
    stream.on('trailers', statusIn);
    stream.on('error', reject);
    stream.on('close', () => reject(new Error('the stream closed without a grpc-status')));
  });
}
