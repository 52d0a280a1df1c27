// One gRPC server of the layers bench (grpc-layers.bench.mjs): answers every
// `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` with one fixed, valid
// RateLimitResponse (encoded per call), no Redis, no decision. What differs between the variants is
// the gRPC server alone:
//
//   http2         node:http2 doing the gRPC framing itself: the 5-byte prefix, protobufjs decode and
//                 encode (as @grpc/proto-loader does them), `grpc-status` in trailers
//   http2-gated   the same, with what Tally's server does per call: the bearer header checked before
//                 the body is read, the in-flight count and shedding, a read timer armed and
//                 cleared, the message size checked from the prefix, `x-request-id` echoed
//   grpc-js       @grpc/grpc-js as it ships (`new Server()`: channelz on), no interceptor
//   grpc-js-opts  grpc-js with the options a grpc-js RLS server would set (channelz off, keepalive,
//                 max connection idle/age, message limits), no interceptor
//   tally         Tally's server as the API runs it (libs/envoy-rls UnaryGrpcServer with the API's
//                 per-call work: the token check, releaseClosedStreams, the request id read and
//                 echoed, the decode counter), the handler answering at once
//   tally-baseline  Tally's server from another build (the bench sets BENCH_DIST): UnaryGrpcServer
//                 when that build has it, else the grpc-js server Tally ran before it (RlsCallGate
//                 as the interceptor, rlsServerOptions, releaseWhenEnded, the request id echoed)
//
//   node test/bench/grpc-layers.server.mjs <variant> <port>
//
// Prints `listening <port>` once bound. With an IPC channel (the bench), `{ gc: 'start' }` starts
// counting what V8's collections free (v8.GCProfiler) and `{ gc: 'stop' }` answers
// `{ gc: { freedBytes, collections } }`: the bytes a call allocates, near enough, over a window
// where the heap does not grow.
import { createRequire } from 'node:module';
import { createServer } from 'node:http2';
import { GCProfiler } from 'node:v8';
import { loadBuilt } from './lib/built.mjs';

const require = createRequire(import.meta.url);
const [variant, portArg] = process.argv.slice(2);
const port = Number(portArg);
const TOKEN = 'Bearer bench-caller-token-0123456789';
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const READ_TIMEOUT_MS = 10_000;
const MAX_INFLIGHT = 2048;
const MAX_MESSAGE_BYTES = 65_536;

/** A one-descriptor answer shaped like Tally's (a binding window, its headers). */
const RESPONSE = {
  overall_code: 'OK',
  statuses: [
    {
      code: 'OK',
      current_limit: { name: 'bench.burst', requests_per_unit: 10_000_000, unit: 'SECOND' },
      limit_remaining: 9_999_999,
      duration_until_reset: { seconds: 1, nanos: 0 },
    },
  ],
  response_headers_to_add: [
    { key: 'ratelimit-policy', value: '"bench.burst";q=10000000;w=1' },
    { key: 'ratelimit', value: '"bench.burst";r=9999999;t=1' },
  ],
};

/** Tally's proto declarations, as the API loads them (rls-proto.ts). */
function rlsService() {
  return loadBuilt('libs/envoy-rls/src/index.js').loadRateLimitService().definition.ShouldRateLimit;
}

function serveHttp2(gated) {
  // The method's serializers are protobufjs's, as @grpc/proto-loader builds them: toObject(decode())
  // and encode(fromObject()).finish(), the same code grpc-js runs per call.
  const method = rlsService();
  let inflight = 0;
  const server = createServer({ maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER, maxSessionMemory: 1e9 });
  const refuse = (stream, code, message) =>
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': code, 'grpc-message': message },
      { endStream: true },
    );
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers[':path'] !== PATH) return refuse(stream, '12', 'unknown method');
    let readTimer;
    if (gated) {
      if (headers.authorization !== TOKEN) return refuse(stream, '16', 'unauthenticated');
      if (inflight >= MAX_INFLIGHT) return refuse(stream, '14', 'server.overloaded');
      inflight += 1;
      stream.once('close', () => {
        clearTimeout(readTimer);
        inflight -= 1;
      });
      readTimer = setTimeout(() => refuse(stream, '4', 'read timeout'), READ_TIMEOUT_MS);
    }
    const chunks = [];
    let length = 0;
    stream.on('data', (chunk) => {
      chunks.push(chunk);
      length += chunk.length;
      if (gated && length >= 5 && chunks[0].length >= 5 && chunks[0].readUInt32BE(1) > MAX_MESSAGE_BYTES) {
        clearTimeout(readTimer);
        refuse(stream, '8', 'message too large');
      }
    });
    stream.on('end', () => {
      clearTimeout(readTimer);
      if (stream.headersSent) return;
      const frame = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
      if (frame.length < 5 || frame[0] !== 0) return refuse(stream, '13', 'bad frame');
      const request = method.requestDeserialize(frame.subarray(5, 5 + frame.readUInt32BE(1)));
      if (request.domain === undefined) return refuse(stream, '3', 'no domain');
      const body = method.responseSerialize(RESPONSE);
      const out = Buffer.allocUnsafe(5 + body.length);
      out[0] = 0;
      out.writeUInt32BE(body.length, 1);
      body.copy(out, 5);
      const head = { ':status': 200, 'content-type': 'application/grpc' };
      if (gated) head['x-request-id'] = headers['x-request-id'] ?? 'bench-request';
      stream.respond(head, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'OK' }));
      stream.end(out);
    });
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
  return { close: () => server.close() };
}

/** The options of a grpc-js RLS server with the API's default limits. */
const GRPC_JS_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': 1024 * 1024,
  'grpc.keepalive_time_ms': 300_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc.max_connection_idle_ms': 300_000,
  'grpc.max_connection_age_ms': 1_800_000,
  'grpc.max_connection_age_grace_ms': 60_000,
  'grpc.enable_channelz': 0,
};
const LIMITS = {
  maxMessageBytes: MAX_MESSAGE_BYTES,
  keepaliveTimeMs: 300_000,
  keepaliveTimeoutMs: 20_000,
  maxConnectionIdleMs: 300_000,
  maxConnectionAgeMs: 1_800_000,
};

function serveGrpcJs(options) {
  const grpc = require('@grpc/grpc-js');
  const server = new grpc.Server(options);
  server.addService(
    { ShouldRateLimit: rlsService() },
    {
      ShouldRateLimit: (call, callback) => callback(null, RESPONSE),
    },
  );
  return bindGrpcJs(grpc, server);
}

function bindGrpcJs(grpc, server) {
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => {
    if (error) throw error;
    process.stdout.write(`listening ${bound}\n`);
  });
  return { close: () => server.forceShutdown() };
}

/** Tally's server (UnaryGrpcServer) with the per-call work of the API's GrpcRlsServer. */
function serveTally() {
  const grpc = require('@grpc/grpc-js');
  const rls = loadBuilt('libs/envoy-rls/src/index.js');
  const info = loadBuilt('apps/decision-api/src/grpc-call-info.js');
  if (rls.UnaryGrpcServer === undefined) return serveTallyOnGrpcJs(grpc, rls, info);
  rls.releaseClosedStreams();
  let decoded = 0;
  const method = rls.loadRateLimitService().shouldRateLimit;
  const server = new rls.UnaryGrpcServer(
    {
      ...method,
      decode: (bytes) => {
        decoded += 1;
        return method.decode(bytes);
      },
    },
    async (request, call) => {
      const { requestId } = info.callInfo(call.headers);
      const headers = { 'x-request-id': requestId };
      if (request.domain === undefined)
        return { ok: false, code: grpc.status.INVALID_ARGUMENT, message: 'no domain', headers };
      return { ok: true, response: RESPONSE, headers };
    },
    {
      ...rls.rlsServerOptions(LIMITS),
      readTimeoutMs: READ_TIMEOUT_MS,
      maxInflight: MAX_INFLIGHT,
      authorize: (headers, peer) =>
        headers.authorization === TOKEN && peer
          ? undefined
          : { code: grpc.status.UNAUTHENTICATED, details: 'unauthenticated' },
      onRefused: () => {},
    },
  );
  server.listen('127.0.0.1', port).then((bound) => process.stdout.write(`listening ${bound}\n`));
  return { close: () => server.close(0), decoded: () => decoded };
}

/** Tally's grpc-js server as builds before UnaryGrpcServer ran it (tally-baseline of such a build). */
function serveTallyOnGrpcJs(grpc, rls, info) {
  const gate = new rls.RlsCallGate({
    authorize: (metadata, peer) =>
      metadata.get('authorization')[0] === TOKEN && peer
        ? undefined
        : { code: grpc.status.UNAUTHENTICATED, details: 'unauthenticated' },
    maxInflight: MAX_INFLIGHT,
    readTimeoutMs: READ_TIMEOUT_MS,
    onRefused: () => {},
  });
  let decoded = 0;
  const method = rlsService();
  rls.releaseClosedStreams();
  const server = new grpc.Server({ ...rls.rlsServerOptions(LIMITS), interceptors: [gate.interceptor] });
  const definition = {
    ShouldRateLimit: {
      ...method,
      requestDeserialize: (bytes) => {
        decoded += 1;
        return method.requestDeserialize(bytes);
      },
    },
  };
  server.addService(definition, {
    ShouldRateLimit: (call, callback) => {
      rls.releaseWhenEnded(call);
      const callInfo = info.callInfo(call);
      if (call.request.domain === undefined) callback({ code: grpc.status.INVALID_ARGUMENT }, null);
      info.echoRequestId(call, callInfo);
      callback(null, RESPONSE);
    },
  });
  return { ...bindGrpcJs(grpc, server), decoded: () => decoded };
}

const VARIANTS = {
  http2: () => serveHttp2(false),
  'http2-gated': () => serveHttp2(true),
  'grpc-js': () => serveGrpcJs({}),
  'grpc-js-opts': () => serveGrpcJs(GRPC_JS_OPTIONS),
  tally: serveTally,
  'tally-baseline': serveTally,
};
if (!VARIANTS[variant] || !Number.isInteger(port))
  throw new Error(`usage: grpc-layers.server.mjs <${Object.keys(VARIANTS).join('|')}> <port>`);
const server = VARIANTS[variant]();

let profiler;
process.on('message', (message) => {
  if (message.gc === 'start') {
    profiler = new GCProfiler();
    profiler.start();
  } else if (message.gc === 'stop' && profiler) {
    const { statistics } = profiler.stop();
    profiler = undefined;
    let freedBytes = 0;
    for (const gc of statistics)
      freedBytes += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    process.send({ gc: { freedBytes, collections: statistics.length } });
  }
});
process.once('SIGTERM', () => {
  server.close();
  process.exit(0);
});
