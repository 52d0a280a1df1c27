/**
 * Tally's unary gRPC server (libs/envoy-rls `UnaryGrpcServer`) on real loopback connections, with the
 * clients Envoy's callers use: @grpc/grpc-js, and raw `node:http2` where a grpc-js client cannot
 * misbehave (stalled, oversized, compressed, repeated or malformed requests; connection lifetimes).
 * The method is the real `ShouldRateLimit` with its protobuf codec; the handler is the test's. No
 * Redis or Kafka: this is the transport alone (the RLS suites under test/e2e run it in the API).
 */
import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
} from 'node:http2';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { credentials, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import {
  loadRateLimitService,
  OVERLOADED_DETAILS,
  UnaryGrpcServer,
  type RlsRefusal,
  type RlsRequest,
  type RlsResponse,
  type UnaryAnswer,
  type UnaryCall,
  type UnaryServerOptions,
} from '@tally/envoy-rls';
import { eventually, makeSelfSignedCert, type SelfSignedCert } from '@tally/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const rls = loadRateLimitService();
const PATH = rls.shouldRateLimit.path;
const TOKEN = 'Bearer good-token';
const POLL = { timeoutMs: 15_000, intervalMs: 10 } as const;
const OK: RlsResponse = {
  overall_code: 'OK',
  statuses: [{ code: 'OK', limit_remaining: 7 }],
  response_headers_to_add: [],
};

type Unary = (
  request: RlsRequest,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, answer?: unknown) => void,
) => { on(event: 'metadata', listener: (m: Metadata) => void): void };
type Handler = (request: RlsRequest, call: UnaryCall) => Promise<UnaryAnswer<RlsResponse>>;

/** A server with the test's handler, counting decodes, refusals and the calls its handler saw. */
class Rig {
  readonly refusals: RlsRefusal[] = [];
  readonly seen: { request: RlsRequest; call: UnaryCall }[] = [];
  decoded = 0;
  readonly server: UnaryGrpcServer<RlsRequest, RlsResponse>;
  port = 0;
  private readonly clients: Client[] = [];
  private readonly sessions: ClientHttp2Session[] = [];

  constructor(handler: Handler, options: Partial<UnaryServerOptions> = {}) {
    const method = {
      ...rls.shouldRateLimit,
      decode: (bytes: Buffer) => {
        this.decoded += 1;
        return rls.shouldRateLimit.decode(bytes);
      },
    };
    this.server = new UnaryGrpcServer(
      method,
      (request, call) => {
        this.seen.push({ request, call });
        return handler(request, call);
      },
      {
        maxMessageBytes: 1024,
        maxSendMessageBytes: 4096,
        readTimeoutMs: 10_000,
        maxInflight: 100,
        keepaliveTimeMs: 300_000,
        keepaliveTimeoutMs: 20_000,
        maxConnectionIdleMs: 300_000,
        maxConnectionAgeMs: 1_800_000,
        connectionAgeGraceMs: 60_000,
        authorize: (headers) =>
          headers.authorization === TOKEN
            ? undefined
            : { code: status.UNAUTHENTICATED, details: 'a token is required' },
        onRefused: (reason) => this.refusals.push(reason),
        ...options,
      },
    );
  }

  async start(): Promise<this> {
    this.port = await this.server.listen('127.0.0.1', 0);
    return this;
  }

  client(secure?: Buffer): Client {
    const target = `127.0.0.1:${this.port}`;
    const client =
      secure === undefined
        ? new rls.Client(target, credentials.createInsecure())
        : new rls.Client(target, credentials.createSsl(secure), {
            'grpc.ssl_target_name_override': 'localhost',
          });
    this.clients.push(client);
    return client;
  }

  /** `ShouldRateLimit` from a grpc-js client: the answer, or the error, and the response headers. */
  call(
    request: RlsRequest,
    options: { token?: string | null; client?: Client } = {},
  ): Promise<{ answer?: RlsResponse; error?: ServiceError; headers?: Metadata }> {
    const { token = TOKEN, client = this.client() } = options;
    const metadata = new Metadata();
    if (token !== null) metadata.set('authorization', token);
    const method = (client as unknown as { ShouldRateLimit: Unary }).ShouldRateLimit.bind(client);
    return new Promise((resolve) => {
      let headers: Metadata | undefined;
      const call = method(request, metadata, { deadline: Date.now() + 30_000 }, (error, answer) =>
        resolve(error ? { error, headers } : { answer: answer as RlsResponse, headers }),
      );
      call.on('metadata', (m) => (headers = m));
    });
  }

  /** A raw HTTP/2 connection to the server. */
  session(secure?: Buffer): ClientHttp2Session {
    const session = secure
      ? connect(`https://localhost:${this.port}`, { ca: secure, rejectUnauthorized: true })
      : connect(`http://127.0.0.1:${this.port}`);
    session.on('error', () => undefined);
    this.sessions.push(session);
    return session;
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.close();
    for (const s of this.sessions) s.destroy();
    await this.server.close(1000);
  }
}

/** A raw `ShouldRateLimit` stream with the caller token, nothing written yet. */
function openCall(session: ClientHttp2Session): ClientHttp2Stream {
  const stream = session.request({
    ':method': 'POST',
    ':path': PATH,
    'content-type': 'application/grpc',
    authorization: TOKEN,
  });
  stream.on('error', () => undefined);
  return stream;
}

/** A raw call: writes `body` (ending the request unless `end` is false), resolves with how it ended. */
function rawCall(
  session: ClientHttp2Session,
  body: Buffer | undefined,
  options: { headers?: Record<string, string>; end?: boolean } = {},
): Promise<{ httpStatus?: number; grpcStatus?: string; message?: string; reset?: number; data: number }> {
  const { headers = {}, end = true } = options;
  const stream = session.request({
    ':method': 'POST',
    ':path': PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
    authorization: TOKEN,
    ...headers,
  });
  let data = 0;
  let httpStatus: number | undefined;
  let grpcStatus: string | undefined;
  let message: string | undefined;
  const statusIn = (h: IncomingHttpHeaders): void => {
    if (h[':status'] !== undefined) httpStatus = Number(h[':status']);
    if (typeof h['grpc-status'] === 'string') grpcStatus = h['grpc-status'];
    if (typeof h['grpc-message'] === 'string') message = decodeURIComponent(h['grpc-message']);
  };
  stream.on('response', statusIn);
  stream.on('trailers', statusIn);
  stream.on('data', (chunk: Buffer) => (data += chunk.length));
  stream.on('error', () => undefined);
  if (body !== undefined) stream.write(body);
  if (end) stream.end();
  return new Promise((resolve) =>
    stream.on('close', () => resolve({ httpStatus, grpcStatus, message, reset: stream.rstCode, data })),
  );
}

const frame = (message: Buffer, flag = 0): Buffer => {
  const out = Buffer.alloc(5 + message.length);
  out[0] = flag;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
};
const requestBytes = (request: RlsRequest): Buffer =>
  (loadRateLimitService().definition.ShouldRateLimit.requestSerialize as (r: RlsRequest) => Buffer)(request);
const REQUEST: RlsRequest = {
  domain: 'edge',
  descriptors: [{ entries: [{ key: 'tenant', value: 'acme' }] }],
};
const answering: Handler = () =>
  Promise.resolve({ ok: true, response: OK, headers: { 'x-request-id': 'req-1' } });
/** A handler that answers only when the test says so. */
function held(): { handler: Handler; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  return { handler: async () => (await gate, { ok: true, response: OK }), release };
}

describe('UnaryGrpcServer', () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('answers a grpc-js call with the decoded request, the handler headers and the peer', async () => {
    rig = await new Rig(answering).start();

    const { answer, headers } = await rig.call(REQUEST);

    expect(answer).toMatchObject({ overall_code: 'OK', statuses: [{ code: 'OK', limit_remaining: 7 }] });
    expect(headers?.get('x-request-id')).toEqual(['req-1']);
    expect(rig.seen[0].request).toEqual(REQUEST);
    expect(rig.seen[0].call.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(rig.seen[0].call.headers.authorization).toBe(TOKEN);
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 0,
      { ...POLL, what: 'the slot back' },
    );
  });

  it("sends a handler's refusal with its code, message and headers", async () => {
    rig = await new Rig(() =>
      Promise.resolve({
        ok: false,
        code: status.INVALID_ARGUMENT,
        message: 'descriptors: 100 % wrong "é"',
        headers: { 'x-request-id': 'req-2' },
      }),
    ).start();

    const { error, headers } = await rig.call(REQUEST);

    expect([error?.code, error?.details]).toEqual([status.INVALID_ARGUMENT, 'descriptors: 100 % wrong "é"']);
    expect(headers?.get('x-request-id')).toEqual(['req-2']);
  });

  it('ends a call whose handler throws with INTERNAL, and goes on serving', async () => {
    let calls = 0;
    rig = await new Rig(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('bug')) : Promise.resolve({ ok: true, response: OK });
    }).start();

    const failed = await rig.call(REQUEST);
    const next = await rig.call(REQUEST);

    expect([failed.error?.code, failed.error?.details]).toEqual([status.INTERNAL, 'internal error']);
    expect(next.answer?.overall_code).toBe('OK');
  });

  it('refuses a stranger from its headers without reading its request, and resets the stream', async () => {
    rig = await new Rig(answering).start();
    const session = rig.session();

    // 64 KiB would fill the stream's flow-control window: the status arrives all the same
    const stranger = await rawCall(session, frame(Buffer.alloc(65_536)), {
      headers: { authorization: 'Bearer no' },
    });
    const grpcStranger = await rig.call(REQUEST, { token: null });

    expect(stranger).toMatchObject({
      grpcStatus: String(status.UNAUTHENTICATED),
      message: 'a token is required',
    });
    expect(stranger.reset).toBe(constants.NGHTTP2_NO_ERROR);
    expect(grpcStranger.error?.code).toBe(status.UNAUTHENTICATED);
    expect(rig.decoded).toBe(0);
    expect(rig.refusals).toEqual(['unauthenticated', 'unauthenticated']);
  });

  it('sheds a call above the in-flight limit with UNAVAILABLE, and takes calls again once a slot is free', async () => {
    const { handler, release } = held();
    rig = await new Rig(handler, { maxInflight: 1 }).start();
    const first = rig.call(REQUEST);
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 1,
      { ...POLL, what: 'one call in flight' },
    );

    const shed = await rig.call(REQUEST);
    release();
    const answered = await first;
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 0,
      { ...POLL, what: 'the slot back' },
    );
    const next = await rig.call(REQUEST);

    expect([shed.error?.code, shed.error?.details]).toEqual([status.UNAVAILABLE, OVERLOADED_DETAILS]);
    expect(answered.answer?.overall_code).toBe('OK');
    expect(next.answer?.overall_code).toBe('OK');
    expect(rig.refusals).toEqual(['overloaded']);
    expect(rig.decoded).toBe(2);
  });

  it('refuses a message announced above the limit from its prefix, undecoded', async () => {
    rig = await new Rig(answering, { maxMessageBytes: 100 }).start();
    const big: RlsRequest = { domain: 'x'.repeat(200), descriptors: [] };

    const viaClient = await rig.call(big);
    const prefixOnly = await rawCall(rig.session(), Buffer.from([0, 0, 0, 0, 101]), { end: false });

    expect([viaClient.error?.code, viaClient.error?.details]).toEqual([
      status.RESOURCE_EXHAUSTED,
      `Received message larger than max (${requestBytes(big).length} vs 100)`,
    ]);
    expect(prefixOnly.grpcStatus).toBe(String(status.RESOURCE_EXHAUSTED));
    expect(rig.decoded).toBe(0);
  });

  it('ends an admitted call that stalls mid-request after the read timeout, and gives its slot back', async () => {
    rig = await new Rig(answering, { readTimeoutMs: 200 }).start();

    const stalled = await rawCall(rig.session(), Buffer.from([0, 0, 0, 0, 100, 1, 2]), { end: false });

    expect(stalled).toMatchObject({
      grpcStatus: String(status.DEADLINE_EXCEEDED),
      message: 'the request was not received within 200 ms',
    });
    expect(rig.refusals).toEqual(['read_timeout']);
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 0,
      { ...POLL, what: 'the slot back' },
    );
  });

  it("ends a call at the caller's grpc-timeout, before the read timeout, and answers nothing after it", async () => {
    const { handler, release } = held();
    rig = await new Rig(handler).start();
    const session = rig.session();

    const slow = await rawCall(session, frame(requestBytes(REQUEST)), {
      headers: { 'grpc-timeout': '100m' },
    });
    const stalled = await rawCall(session, Buffer.from([0, 0]), {
      headers: { 'grpc-timeout': '100m' },
      end: false,
    });
    release();
    const bad = await rawCall(session, frame(requestBytes(REQUEST)), { headers: { 'grpc-timeout': '1x' } });

    expect(slow).toMatchObject({
      grpcStatus: String(status.DEADLINE_EXCEEDED),
      message: 'Deadline exceeded',
      data: 0,
    });
    expect(stalled).toMatchObject({
      grpcStatus: String(status.DEADLINE_EXCEEDED),
      message: 'Deadline exceeded',
    });
    expect(bad).toMatchObject({
      grpcStatus: String(status.INTERNAL),
      message: 'Invalid grpc-timeout value "1x"',
    });
    expect(rig.refusals).toEqual([]);
    expect(rig.seen.map((s) => s.call.ended)).toEqual([true]);
  });

  it('marks a call the caller cancelled as ended, holds its slot until its handler settles, and writes nothing for it', async () => {
    const { handler, release } = held();
    rig = await new Rig(handler).start();
    const stream = openCall(rig.session());
    stream.end(frame(requestBytes(REQUEST)));
    await eventually(
      () => rig!.seen.length,
      (n) => n === 1,
      { ...POLL, what: 'the handler' },
    );

    // when: the caller cancels while its decision is still being made
    stream.close(constants.NGHTTP2_CANCEL);
    await eventually(
      () => rig!.seen[0].call.ended,
      (ended) => ended,
      { ...POLL, what: 'the call ended' },
    );
    const heldWhileDeciding = rig.server.inFlight;
    release();
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 0,
      { ...POLL, what: 'the slot back' },
    );
    const next = await rig.call(REQUEST);

    // then: the slot was the decision's until it was made; the server goes on
    expect(heldWhileDeciding).toBe(1);
    expect(next.answer?.overall_code).toBe('OK');
  });

  it('cancels a call whose caller does not read its answer, after the read timeout, and frees its slot', async () => {
    rig = await new Rig(answering, { readTimeoutMs: 300 }).start();
    // a caller that opens no flow-control window: the answer's DATA can never be sent
    const session = connect(`http://127.0.0.1:${rig.port}`, { settings: { initialWindowSize: 0 } });
    session.on('error', () => undefined);
    try {
      const stream = openCall(session);
      const reset = new Promise<number>((r) => stream.on('close', () => r(stream.rstCode ?? -1)));
      stream.end(frame(requestBytes(REQUEST)));

      expect(await reset).toBe(constants.NGHTTP2_CANCEL);
      await eventually(
        () => rig!.server.inFlight,
        (n) => n === 0,
        { ...POLL, what: 'the slot back' },
      );
      expect(rig.seen).toHaveLength(1);
    } finally {
      session.destroy();
    }
  });

  it('takes a grpc-timeout beyond what a timer holds as no deadline', async () => {
    rig = await new Rig(answering).start();

    const far = await rawCall(rig.session(), frame(requestBytes(REQUEST)), {
      headers: { 'grpc-timeout': '99999999H' },
    });

    expect(far.grpcStatus).toBe('0');
  });

  it('survives a caller check that throws and a handler header HTTP/2 refuses (a connection header), and goes on serving', async () => {
    let checks = 0;
    let answers = 0;
    rig = await new Rig(
      () => {
        answers += 1;
        return Promise.resolve({
          ok: true,
          response: OK,
          headers: answers === 1 ? { connection: 'keep-alive' } : {},
        });
      },
      {
        authorize: () => {
          checks += 1;
          if (checks === 1) throw new Error('token store bug');
          return undefined;
        },
      },
    ).start();
    const session = rig.session();

    const checkThrew = await rawCall(session, frame(requestBytes(REQUEST)));
    const badHeader = await rawCall(session, frame(requestBytes(REQUEST)));
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 0,
      { ...POLL, what: 'the slot back' },
    );
    const next = await rig.call(REQUEST);

    expect([checkThrew.grpcStatus, checkThrew.message]).toEqual([String(status.INTERNAL), 'internal error']);
    expect([badHeader.grpcStatus, badHeader.reset]).toEqual([undefined, constants.NGHTTP2_INTERNAL_ERROR]);
    expect(next.answer?.overall_code).toBe('OK');
  });

  it('reads a gzip- or deflate-compressed request, refuses an unknown encoding and a bomb', async () => {
    rig = await new Rig(answering, { maxMessageBytes: 1024 }).start();
    const session = rig.session();
    const bytes = requestBytes(REQUEST);

    const gzipping = new rls.Client(`127.0.0.1:${rig.port}`, credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2, // gzip
    });
    const gzipClient = await rig.call(REQUEST, { client: gzipping });
    gzipping.close();
    const snappy = await rawCall(session, frame(bytes, 1), { headers: { 'grpc-encoding': 'snappy' } });
    const flagWithoutEncoding = await rawCall(session, frame(bytes, 1));
    const bomb = await rawCall(session, frame(gzipSync(Buffer.alloc(100_000))), {
      headers: { 'grpc-encoding': 'gzip' },
    });
    const bombFlagged = await rawCall(session, frame(gzipSync(Buffer.alloc(100_000)), 1), {
      headers: { 'grpc-encoding': 'gzip' },
    });

    expect(gzipClient.answer?.overall_code).toBe('OK');
    expect(rig.seen.map((s) => s.request)).toEqual([REQUEST]);
    expect(snappy).toMatchObject({
      grpcStatus: String(status.UNIMPLEMENTED),
      message: 'Received message compressed with unsupported encoding "snappy"',
    });
    expect(flagWithoutEncoding.grpcStatus).toBe(String(status.UNIMPLEMENTED));
    // flag 0: the gzip bytes are read as protobuf, which they are not
    expect(bomb).toMatchObject({
      grpcStatus: String(status.INTERNAL),
      message: 'Error deserializing request',
    });
    expect(bombFlagged).toMatchObject({
      grpcStatus: String(status.RESOURCE_EXHAUSTED),
      message: 'Received message that decompresses to a size larger than 1024',
    });
  });

  it('refuses what is not one unary call: a second message, none, another method, another content type, a GET', async () => {
    rig = await new Rig(answering).start();
    const session = rig.session();
    const one = frame(requestBytes(REQUEST));

    const two = await rawCall(session, Buffer.concat([one, one]));
    const none = await rawCall(session, undefined);
    const other = await rawCall(session, one, { headers: { ':path': '/pkg.Other/Method' } });
    const json = await rawCall(session, one, { headers: { 'content-type': 'application/json' } });
    const get = await rawCall(session, undefined, { headers: { ':method': 'GET' } });

    expect([two.grpcStatus, two.message]).toEqual([
      String(status.UNIMPLEMENTED),
      `Received a second request message for unary method ${PATH}`,
    ]);
    expect([none.grpcStatus, none.message]).toEqual([
      String(status.UNIMPLEMENTED),
      `Received no request message for unary method ${PATH}`,
    ]);
    expect([other.grpcStatus, other.message]).toEqual([
      String(status.UNIMPLEMENTED),
      'The server does not implement the method /pkg.Other/Method',
    ]);
    expect([json.httpStatus, json.grpcStatus]).toEqual([415, undefined]);
    expect([get.httpStatus, get.grpcStatus]).toEqual([405, undefined]);
    expect(rig.seen).toHaveLength(0);
  });

  it('ends a call whose answer is above the send limit with RESOURCE_EXHAUSTED', async () => {
    const huge: RlsResponse = {
      overall_code: 'OK',
      statuses: [],
      response_headers_to_add: [{ key: 'k', value: 'v'.repeat(5000) }],
    };
    rig = await new Rig(() => Promise.resolve({ ok: true, response: huge }), {
      maxSendMessageBytes: 4096,
    }).start();

    const { error } = await rig.call(REQUEST);

    expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/^Sent message larger than max \(\d+ vs\. 4096\)$/);
  });

  it('sends GOAWAY to a connection idle for the idle limit, counted from its last call', async () => {
    const { handler, release } = held();
    rig = await new Rig(handler, { maxConnectionIdleMs: 300 }).start();
    const busy = rig.session();
    const idle = rig.session();
    const goawayAt = (session: ClientHttp2Session) =>
      new Promise<number>((r) => session.once('goaway', () => r(performance.now())));
    const busyGoaway = goawayAt(busy);
    const idleGoaway = goawayAt(idle);
    const started = performance.now();
    const inFlight = rawCall(busy, frame(requestBytes(REQUEST)));
    idle.ping(() => undefined);

    // when: the idle connection is sent GOAWAY; half an idle time later the other one's call is answered
    const idleAt = await idleGoaway;
    await new Promise((r) => setTimeout(r, 150));
    release();
    const answered = await inFlight;
    const answeredAt = performance.now();
    const busyAt = await busyGoaway;

    // then: the busy connection's idle time ran from its call's end, not from its start
    expect(idleAt - started).toBeGreaterThanOrEqual(250);
    expect(answered.grpcStatus).toBe('0');
    expect(busyAt - answeredAt).toBeGreaterThanOrEqual(250);
  });

  it('sends GOAWAY at the maximum age; a call on the connection still finishes within the grace', async () => {
    const { handler, release } = held();
    rig = await new Rig(handler, { maxConnectionAgeMs: 300, connectionAgeGraceMs: 60_000 }).start();
    const session = rig.session();
    const goaway = new Promise<void>((r) => session.once('goaway', () => r()));
    const inFlight = rawCall(session, frame(requestBytes(REQUEST)));

    await goaway;
    release();

    expect((await inFlight).grpcStatus).toBe('0');
  });

  it('pings a connection every keepalive time', async () => {
    rig = await new Rig(answering, { keepaliveTimeMs: 100 }).start();
    const session = rig.session();
    let pings = 0;
    session.on('ping', () => (pings += 1));

    await eventually(
      () => pings,
      (n) => n >= 2,
      { ...POLL, what: 'two keepalive pings' },
    );

    expect(session.destroyed).toBe(false);
  });

  it('drains at close: a call in flight is answered, new connections are refused, what outlasts the drain is cut', async () => {
    const { handler, release } = held();
    rig = await new Rig(handler).start();
    const answered = rig.call(REQUEST);
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 1,
      { ...POLL, what: 'one call in flight' },
    );

    const closing = rig.server.close(10_000);
    const refused = await rig.call(REQUEST);
    release();
    const cut = await closing;

    expect((await answered).answer?.overall_code).toBe('OK');
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    expect(cut).toBe(0);

    const stuck = held();
    rig = await new Rig(stuck.handler).start();
    const pending = rig.call(REQUEST);
    await eventually(
      () => rig!.server.inFlight,
      (n) => n === 1,
      { ...POLL, what: 'one call in flight' },
    );
    expect(await rig.server.close(100)).toBe(1);
    expect((await pending).error?.code).toBe(status.UNAVAILABLE);
    stuck.release();
  });

  describe('over TLS', () => {
    let cert: SelfSignedCert;
    let other: SelfSignedCert;
    beforeAll(() => {
      cert = makeSelfSignedCert();
      other = makeSelfSignedCert();
    });
    afterAll(() => {
      cert?.remove();
      other?.remove();
    });

    it('answers a client that trusts its certificate, and no plaintext or untrusting client', async () => {
      rig = await new Rig(answering, {
        tls: { cert: cert.certPem, key: readFileSync(cert.keyPath) },
      }).start();

      const trusted = await rig.call(REQUEST, { client: rig.client(cert.certPem) });
      const plaintext = await rig.call(REQUEST);
      const untrusting = await rig.call(REQUEST, { client: rig.client(other.certPem) });

      expect(trusted.answer?.overall_code).toBe('OK');
      expect(plaintext.error?.code).toBe(status.UNAVAILABLE);
      expect(untrusting.error?.code).toBe(status.UNAVAILABLE);
      expect(rig.seen).toHaveLength(1);
    });
  });
});
