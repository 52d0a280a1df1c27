import {
  constants,
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type SecureServerOptions,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import { gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { status } from '@grpc/grpc-js';
import {
  ACCEPTED_ENCODINGS,
  encodeGrpcMessage,
  firstValue,
  frameMessage,
  parseGrpcTimeout,
  UnaryMessageReader,
  type GrpcFailure,
} from './grpc-wire';

/** Why the server ended a call before its handler saw it. */
export type RlsRefusal = 'unauthenticated' | 'forbidden' | 'overloaded' | 'read_timeout';

/** The header-stage answer to a call's token: a stranger (UNAUTHENTICATED) or a token without the role. */
export interface AuthRefusal {
  readonly code: status.UNAUTHENTICATED | status.PERMISSION_DENIED;
  readonly details: string;
}

export const OVERLOADED_DETAILS = 'server.overloaded: too many calls in flight; retry shortly';

/** The one method a server answers, with its message codec. */
export interface UnaryMethod<Req, Res> {
  /** `/package.Service/Method` */
  readonly path: string;
  readonly decode: (bytes: Buffer) => Req;
  readonly encode: (response: Res) => Uint8Array;
}

/** What a handler knows of its call. */
export interface UnaryCall {
  /** The request's headers: its metadata (`authorization`, `x-request-id`, `traceparent`, …). */
  readonly headers: IncomingHttpHeaders;
  /** The connection, `address:port` of the caller. */
  readonly peer: string;
  /** Over before the handler answered (cancelled, past its deadline, its connection gone): no answer is sent. */
  readonly ended: boolean;
}

/** A handler's answer; `headers` go out in the response headers (initial metadata), before the status. */
export type UnaryAnswer<Res> =
  | { readonly ok: true; readonly response: Res; readonly headers?: OutgoingHttpHeaders }
  | {
      readonly ok: false;
      readonly code: status;
      readonly message: string;
      readonly headers?: OutgoingHttpHeaders;
    };

export type UnaryHandler<Req, Res> = (request: Req, call: UnaryCall) => Promise<UnaryAnswer<Res>>;

export interface UnaryServerOptions {
  /** TLS only (ALPN `h2`, no plaintext on the port); absent: h2c with prior knowledge. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Largest request message; a larger one is refused from its length prefix (RESOURCE_EXHAUSTED). */
  readonly maxMessageBytes: number;
  /** Largest answer; above it the call ends RESOURCE_EXHAUSTED instead (a bug guard). */
  readonly maxSendMessageBytes: number;
  /** How long an admitted call may take to deliver its whole request (DEADLINE_EXCEEDED). */
  readonly readTimeoutMs: number;
  /** Admitted calls in flight above which new ones are shed (UNAVAILABLE `server.overloaded`). */
  readonly maxInflight: number;
  /** A ping after this long, on every connection; unanswered within the timeout, the connection is closed. */
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  /** A connection without a call for this long is sent GOAWAY and closed. */
  readonly maxConnectionIdleMs: number;
  /** A connection this old (± 10 %) is sent GOAWAY; its calls get `connectionAgeGraceMs` to finish. */
  readonly maxConnectionAgeMs: number;
  readonly connectionAgeGraceMs: number;
  /** The header-stage check, before the request is read: a refusal, or undefined to go on. */
  readonly authorize: (headers: IncomingHttpHeaders, peer: string) => AuthRefusal | undefined;
  /** Sees every refusal (metrics). */
  readonly onRefused?: (reason: RlsRefusal) => void;
}

const OK_STATUS = String(status.OK);
// No `date` header: gRPC has no use for it, and it changes every second (HPACK encodes it again).
const END_STREAM = { endStream: true, sendDate: false } as const;
const WAIT_FOR_TRAILERS = { waitForTrailers: true, sendDate: false } as const;
const OK_TRAILERS = { 'grpc-status': OK_STATUS } as const;
/** The highest stream id (2^31 − 1): "no new streams", the first of the two GOAWAYs. */
const LAST_STREAM_ID = 2 ** 31 - 1;
/** How long the second GOAWAY waits for the ping of the first at most. */
const GOAWAY_PING_WAIT_MS = 1000;
/** The longest delay a Node timer holds (2^31 − 1 ms, ≈ 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A gRPC server of one unary method on Node's HTTP/2, doing the gRPC framing itself. Per call, in
 * order, before the request is read (its stream stays paused): the method, `content-type` and
 * `grpc-timeout` checks, the caller check (`authorize`), and the in-flight limit. An admitted call's
 * request is read under the read deadline (and the caller's deadline), its size refused from the
 * message prefix, decompressed when the caller compressed it, decoded, and handed to the handler.
 * Its slot is given back once its stream has closed and its handler has settled, however the call
 * ended: a caller that gives up does not free a slot its decision still holds. Connections get
 * keepalive pings, an idle limit and a maximum age; `close` drains them.
 */
export class UnaryGrpcServer<Req, Res> {
  private inflight = 0;
  private server?: Http2Server | Http2SecureServer;
  private closing = false;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly context: CallContext<Req, Res>;

  constructor(
    private readonly method: UnaryMethod<Req, Res>,
    handler: UnaryHandler<Req, Res>,
    private readonly options: UnaryServerOptions,
  ) {
    this.context = { method, handler, options, release: () => (this.inflight -= 1) };
  }

  /** Calls admitted and not yet over (stream closed and handler settled). */
  get inFlight(): number {
    return this.inflight;
  }

  /** Binds `host:port` (0 = any free port) and resolves with the bound port. */
  async listen(host: string, port: number): Promise<number> {
    const common = {
      maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    };
    const tls = this.options.tls;
    const server =
      tls === undefined
        ? createServer(common)
        : createSecureServer({
            ...common,
            cert: tls.cert,
            key: tls.key,
            allowHTTP1: false,
            ALPNProtocols: ['h2'],
          } satisfies SecureServerOptions);
    if (tls !== undefined) {
      // A client that failed the handshake or negotiated no `h2`: nothing to answer, the socket goes.
      server.on('tlsClientError', ignore);
      server.on('secureConnection', (socket: Socket) => socket.on('error', ignore));
      server.on('unknownProtocol', (socket: Socket) => socket.destroy());
    }
    server.on('session', (session: ServerHttp2Session) => this.openSession(session));
    server.on('sessionError', ignore);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', ignore);
    this.server = server;
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  }

  /**
   * Stops taking connections, sends every connection GOAWAY and waits for the calls on them to end,
   * up to `drainMs`; then cuts what is left. Resolves with the number of connections cut.
   */
  async close(drainMs: number): Promise<number> {
    const server = this.server;
    if (server === undefined) return 0;
    this.server = undefined;
    this.closing = true;
    const closed = [...this.sessions].map(
      (session) =>
        new Promise<void>((resolve) => (session.destroyed ? resolve() : session.once('close', resolve))),
    );
    // GOAWAY, then each session ends once its last stream has (Node's server.close does the same;
    // a session's close is idempotent). A TLS handshake still under way is closed when it completes.
    server.close();
    for (const session of this.sessions) session.close();
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      Promise.all(closed).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(resolve, drainMs, false))),
    ]);
    clearTimeout(timer);
    if (drained) return 0;
    const cut = [...this.sessions];
    for (const session of cut) session.destroy();
    return cut.length;
  }

  private openSession(session: ServerHttp2Session): void {
    this.sessions.add(session);
    const socket = session.socket;
    const peer = `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`;
    const connection = new Connection(session, this.options);
    session.on('error', ignore);
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) =>
      this.onStream(stream, headers, peer, connection),
    );
    session.once('close', () => {
      this.sessions.delete(session);
      connection.stop();
    });
    if (this.closing) session.close();
  }

  private onStream(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    peer: string,
    connection: Connection,
  ): void {
    stream.on('error', ignore);
    connection.streams += 1;
    const timeoutMs = parseGrpcTimeout(headers['grpc-timeout']);
    const refusal = this.refusal(headers, peer, timeoutMs);
    if (refusal === undefined) {
      this.inflight += 1;
      new AdmittedCall(
        this.context,
        stream,
        headers,
        peer,
        connection,
        timeoutMs as number | undefined,
      ).read();
      return;
    }
    stream.on('close', connection.streamClosed);
    if (typeof refusal === 'number') respondHttp(stream, refusal);
    else endCall(stream, refusal.code, refusal.details);
  }

  /** Why a call is refused before its request is read (an HTTP status: not a gRPC call at all). */
  private refusal(
    headers: IncomingHttpHeaders,
    peer: string,
    timeoutMs: number | undefined | GrpcFailure,
  ): GrpcFailure | number | undefined {
    if (headers[':method'] !== 'POST') return constants.HTTP_STATUS_METHOD_NOT_ALLOWED;
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc'))
      return constants.HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE;
    const path = headers[':path'];
    if (path !== this.method.path)
      return {
        code: status.UNIMPLEMENTED,
        details: `The server does not implement the method ${String(path)}`,
      };
    if (typeof timeoutMs === 'object') return timeoutMs;
    const { authorize, onRefused, maxInflight } = this.options;
    let denied: AuthRefusal | undefined;
    try {
      denied = authorize(headers, peer);
    } catch {
      return { code: status.INTERNAL, details: 'internal error' };
    }
    if (denied !== undefined) {
      onRefused?.(denied.code === status.UNAUTHENTICATED ? 'unauthenticated' : 'forbidden');
      return denied;
    }
    if (this.inflight >= maxInflight) {
      onRefused?.('overloaded');
      return { code: status.UNAVAILABLE, details: OVERLOADED_DETAILS };
    }
    return undefined;
  }
}

/** What every call of one server shares. */
interface CallContext<Req, Res> {
  readonly method: UnaryMethod<Req, Res>;
  readonly handler: UnaryHandler<Req, Res>;
  readonly options: UnaryServerOptions;
  /** An admitted call is over: its slot is free. */
  readonly release: () => void;
}

/** The call a stream carries, for the stream's listeners (module functions: no closures per call). */
const CALL = Symbol('call');
type CallStream = ServerHttp2Stream & { [CALL]: CallEvents };

/** What an admitted call is told by its stream and its timer. */
interface CallEvents {
  received(chunk: Buffer): void;
  requestIn(): void;
  closed(): void;
  timedOut(): void;
}

/** Phases of an admitted call. */
const READING = 0;
const HANDLING = 1;
/** An answer or a status went out (or the call ended): nothing else will be written. */
const DONE = 2;

/**
 * One admitted call, from its headers to the close of its stream. One timer per call: the caller's
 * deadline when it comes before the read deadline, else the read deadline, then (rarely) the rest of
 * the caller's deadline once the request is in. Once the answer is written the read deadline starts
 * again: a caller that does not read its answer (a zero flow-control window) has its stream
 * cancelled then, so it cannot hold a slot until its connection ages out.
 */
class AdmittedCall<Req, Res> implements UnaryCall, CallEvents {
  ended = false;
  private phase = READING;
  private handlerRunning = false;
  private timer: NodeJS.Timeout;
  /** `timer` runs to the caller's deadline (else to the read deadline). */
  private timerIsDeadline: boolean;
  private readonly reader: UnaryMessageReader;
  private readonly deadlineAt: number | undefined;

  constructor(
    private readonly context: CallContext<Req, Res>,
    private readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly peer: string,
    private readonly connection: Connection,
    timeoutMs: number | undefined,
  ) {
    const { maxMessageBytes, readTimeoutMs } = context.options;
    this.reader = new UnaryMessageReader(maxMessageBytes, context.method.path);
    this.deadlineAt = timeoutMs === undefined ? undefined : performance.now() + timeoutMs;
    this.timerIsDeadline = timeoutMs !== undefined && timeoutMs <= readTimeoutMs;
    this.timer = setTimeout(onTimer, this.timerIsDeadline ? timeoutMs : readTimeoutMs, this);
  }

  read(): void {
    const stream = this.stream as CallStream;
    stream[CALL] = this;
    stream.on('close', onClose);
    stream.on('data', onData);
    stream.on('end', onEnd);
  }

  received(chunk: Buffer): void {
    if (this.phase !== READING) return;
    const failure = this.reader.push(chunk);
    if (failure !== undefined) this.fail(failure.code, failure.details);
  }

  requestIn(): void {
    if (this.phase !== READING) return;
    this.phase = HANDLING;
    if (!this.timerIsDeadline && this.deadlineAt !== undefined) {
      clearTimeout(this.timer);
      this.timerIsDeadline = true;
      this.timer = setTimeout(onTimer, Math.max(1, this.deadlineAt - performance.now()), this);
    }
    const read = this.reader.finish();
    if ('code' in read) return this.fail(read.code, read.details);
    if (!read.compressed) return this.decoded(read.message);
    const encoding = this.headers['grpc-encoding'];
    void decompress(read.message, encoding, this.context.options.maxMessageBytes).then((message) =>
      Buffer.isBuffer(message) ? this.decoded(message) : this.fail(message.code, message.details),
    );
  }

  timedOut(): void {
    if (this.ended) return;
    if (this.phase === DONE) {
      // The answer (or status) is written but the caller has not taken it: let go of the call.
      if (!this.stream.closed) this.stream.close(constants.NGHTTP2_CANCEL);
      return;
    }
    if (this.timerIsDeadline) return this.fail(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    // The read deadline while the handler runs: the handler's own deadlines bound it; the timer is
    // started again when the answer is written.
    if (this.phase === HANDLING) return;
    const { onRefused, readTimeoutMs } = this.context.options;
    onRefused?.('read_timeout');
    this.fail(status.DEADLINE_EXCEEDED, `the request was not received within ${readTimeoutMs} ms`);
  }

  closed(): void {
    this.ended = true;
    this.phase = DONE;
    clearTimeout(this.timer);
    this.connection.streamClosed();
    if (!this.handlerRunning) this.context.release();
  }

  private decoded(message: Buffer): void {
    if (this.phase !== HANDLING) return;
    const { method, handler } = this.context;
    let request: Req;
    try {
      request = method.decode(message);
    } catch {
      return this.fail(status.INTERNAL, 'Error deserializing request');
    }
    this.handlerRunning = true;
    let answered: Promise<UnaryAnswer<Res>>;
    try {
      answered = handler(request, this);
    } catch (error) {
      answered = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    answered.then(
      (answer) => this.settled(answer),
      () => this.settled(undefined),
    );
  }

  /** The handler's answer (undefined: it failed), written unless the call is over meanwhile. */
  private settled(answer: UnaryAnswer<Res> | undefined): void {
    this.handlerRunning = false;
    if (this.ended) return this.context.release();
    if (this.phase !== HANDLING) return;
    try {
      if (answer === undefined) this.fail(status.INTERNAL, 'internal error');
      else this.answer(answer);
    } catch {
      // A header the handler gave that HTTP/2 refuses, or a stream reset in between.
      if (!this.stream.closed) this.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    }
  }

  private answer(answer: UnaryAnswer<Res>): void {
    if (!answer.ok) {
      if (answer.headers === undefined) return this.fail(answer.code, answer.message);
      return this.finish(answer.headers, {
        'grpc-status': String(answer.code),
        'grpc-message': encodeGrpcMessage(answer.message),
      });
    }
    let body: Uint8Array;
    try {
      body = this.context.method.encode(answer.response);
    } catch {
      return this.fail(status.INTERNAL, 'Error serializing response');
    }
    const max = this.context.options.maxSendMessageBytes;
    if (body.length > max)
      return this.fail(status.RESOURCE_EXHAUSTED, `Sent message larger than max (${body.length} vs. ${max})`);
    this.finish(answer.headers, OK_TRAILERS, frameMessage(body));
  }

  /** Response headers, the message (if any) and the trailers: one write. */
  private finish(
    extra: OutgoingHttpHeaders | undefined,
    trailers: OutgoingHttpHeaders,
    frame?: Buffer,
  ): void {
    this.done();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    const headers: OutgoingHttpHeaders = {
      ':status': 200,
      'content-type': 'application/grpc+proto',
      'grpc-accept-encoding': ACCEPTED_ENCODINGS,
      ...extra,
    };
    stream.respond(headers, WAIT_FOR_TRAILERS);
    if (trailers === OK_TRAILERS) stream.on('wantTrailers', sendOkTrailers);
    else stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end(frame);
  }

  /** Ends the call with a status and no answer; the handler, if running, answers into the void. */
  private fail(code: status, details: string): void {
    if (this.phase === DONE) return;
    this.done();
    endCall(this.stream, code, details);
  }

  /** Nothing more is written; the read deadline bounds how long the caller may take to read it. */
  private done(): void {
    this.phase = DONE;
    if (this.timerIsDeadline) return;
    this.timer.refresh();
  }
}

function onData(this: CallStream, chunk: Buffer): void {
  this[CALL].received(chunk);
}

function onEnd(this: CallStream): void {
  this[CALL].requestIn();
}

function onClose(this: CallStream): void {
  this[CALL].closed();
}

function onTimer(call: CallEvents): void {
  call.timedOut();
}

/**
 * The connection's own timers: keepalive pings, the idle limit, the maximum age. Streams are counted
 * so that an idle connection is one without a call, not one without a new call.
 */
class Connection {
  streams = 0;
  private idleSince = performance.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private ageTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  /** A stream of this connection closed (a listener as it is, or called by an admitted call). */
  readonly streamClosed = (): void => {
    this.streams -= 1;
    if (this.streams === 0) this.idleSince = performance.now();
  };

  constructor(
    private readonly session: ServerHttp2Session,
    private readonly options: UnaryServerOptions,
  ) {
    const { maxConnectionIdleMs, maxConnectionAgeMs, keepaliveTimeMs } = options;
    if (maxConnectionIdleMs > 0) this.idleTimer = unrefTimer(() => this.checkIdle(), maxConnectionIdleMs);
    if (maxConnectionAgeMs > 0) {
      const jitter = (Math.random() * 2 - 1) * (maxConnectionAgeMs / 10);
      this.ageTimer = unrefTimer(() => this.aged(), maxConnectionAgeMs + jitter);
    }
    if (keepaliveTimeMs > 0) this.pingTimer = unrefTimer(() => this.ping(), keepaliveTimeMs);
  }

  stop(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.ageTimer);
    clearTimeout(this.graceTimer);
    clearTimeout(this.closeTimer);
    clearTimeout(this.pingTimer);
  }

  private checkIdle(): void {
    const idleFor = performance.now() - this.idleSince;
    const limit = this.options.maxConnectionIdleMs;
    if (this.streams === 0 && idleFor >= limit) return this.goAway();
    this.idleTimer = unrefTimer(() => this.checkIdle(), this.streams === 0 ? limit - idleFor : limit);
  }

  private aged(): void {
    this.goAway();
    this.graceTimer = unrefTimer(() => this.session.destroy(), this.options.connectionAgeGraceMs);
  }

  /**
   * GOAWAY in two steps: first "no new streams" (the highest stream id), then, once a ping has gone
   * round (streams the caller opened meanwhile have arrived), a graceful close whose GOAWAY names
   * the last stream taken; the calls on the connection finish first.
   */
  private goAway(): void {
    const session = this.session;
    if (session.closed || session.destroyed) return;
    const close = (): void => {
      if (!session.closed && !session.destroyed) session.close();
    };
    try {
      session.goaway(constants.NGHTTP2_NO_ERROR, LAST_STREAM_ID);
      if (!session.ping(close)) close();
    } catch {
      close();
    }
    // A caller that never answers the ping: closed anyway.
    this.closeTimer ??= unrefTimer(close, GOAWAY_PING_WAIT_MS);
  }

  private ping(): void {
    const session = this.session;
    if (session.closed || session.destroyed) return;
    let sent = false;
    try {
      sent = session.ping((error) => {
        clearTimeout(this.pingTimer);
        if (error) return session.destroy();
        this.pingTimer = unrefTimer(() => this.ping(), this.options.keepaliveTimeMs);
      });
    } catch {
      sent = false;
    }
    if (!sent) return session.destroy();
    this.pingTimer = unrefTimer(() => session.destroy(), this.options.keepaliveTimeoutMs);
  }
}

/** Ends a call with a status and no answer ("trailers-only"), and stops the caller sending more. */
function endCall(stream: ServerHttp2Stream, code: status, details: string): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) {
    // Not reached by this server (headers go out with the answer only); kept for safety.
    stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc+proto',
      'grpc-status': String(code),
      'grpc-message': encodeGrpcMessage(details),
    },
    END_STREAM,
  );
  // RST_STREAM NO_ERROR after the status: the caller stops sending a request nobody will read.
  if (!stream.readableEnded) stream.close(constants.NGHTTP2_NO_ERROR);
}

/** A plain HTTP answer to what is not a gRPC call at all. */
function respondHttp(stream: ServerHttp2Stream, httpStatus: number): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': httpStatus }, END_STREAM);
  if (!stream.readableEnded) stream.close(constants.NGHTTP2_NO_ERROR);
}

function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/** A compressed request message, uncompressed up to `maxBytes`, or why it cannot be. */
function decompress(
  message: Buffer,
  encoding: string | string[] | undefined,
  maxBytes: number,
): Promise<Buffer | GrpcFailure> {
  const name = firstValue(encoding);
  const run = name === 'gzip' ? gunzip : name === 'deflate' ? inflate : undefined;
  if (run === undefined)
    return Promise.resolve({
      code: status.UNIMPLEMENTED,
      details: `Received message compressed with unsupported encoding "${name ?? 'identity'}"`,
    });
  const options: ZlibOptions = { maxOutputLength: maxBytes };
  return new Promise((resolve) =>
    run(message, options, (error, out) => {
      if (error === null) return resolve(out);
      resolve(
        (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
          ? {
              code: status.RESOURCE_EXHAUSTED,
              details: `Received message that decompresses to a size larger than ${maxBytes}`,
            }
          : { code: status.INTERNAL, details: 'Failed to decompress message' },
      );
    }),
  );
}

/** A timer that does not keep the process alive, its delay within what a Node timer holds. */
function unrefTimer(run: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(run, Math.min(MAX_TIMER_MS, Math.max(1, ms))).unref();
}

function ignore(): void {}
