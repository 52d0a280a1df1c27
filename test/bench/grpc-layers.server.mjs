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
//   grpc-js-opts  grpc-js with Tally's server options (rlsServerOptions: channelz off, keepalive,
//                 max connection idle/age, message limits), no interceptor
//   grpc-js-check grpc-js-opts + an interceptor shaped like Tally's RlsCallGate without its read
//                 timer (the header check, the in-flight count, the release on cancel)
//   grpc-js-gate  grpc-js-opts + Tally's RlsCallGate as the interceptor (the header check a string
//                 comparison; its read timer armed at the metadata, cleared at the half-close)
//   tally         grpc-js-opts + the gate + everything else Tally's GrpcRlsServer does per call
//                 (releaseClosedStreams, releaseWhenEnded, callInfo + echoRequestId, the decode counter)
//   tally-bare    tally without any interceptor (what the gate costs in Tally's server: tally minus this)
//   tally-check   tally with grpc-js-check's interceptor instead of the gate (the read timer's cost)
//   tally-baseline  tally, Tally's libs taken from another build (the bench sets BENCH_DIST)
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

function serveGrpcJs(layers) {
  const grpc = require('@grpc/grpc-js');
  const rls = loadBuilt('libs/envoy-rls/src/index.js');
  const info = layers.tally ? loadBuilt('apps/decision-api/src/grpc-call-info.js') : undefined;
  const options = layers.options
    ? rls.rlsServerOptions({
        maxMessageBytes: MAX_MESSAGE_BYTES,
        keepaliveTimeMs: 300_000,
        keepaliveTimeoutMs: 20_000,
        maxConnectionIdleMs: 300_000,
        maxConnectionAgeMs: 1_800_000,
      })
    : {};
  if (layers.check) options.interceptors = [checkingInterceptor(grpc)];
  if (layers.gate) {
    const gate = new rls.RlsCallGate({
      authorize: (metadata, peer) =>
        metadata.get('authorization')[0] === TOKEN && peer
          ? undefined
          : { code: grpc.status.UNAUTHENTICATED, details: 'unauthenticated' },
      maxInflight: MAX_INFLIGHT,
      readTimeoutMs: READ_TIMEOUT_MS,
      onRefused: () => {},
    });
    options.interceptors = [gate.interceptor];
  }
  let decoded = 0;
  const method = rlsService();
  const definition = {
    ShouldRateLimit: layers.tally
      ? {
          ...method,
          requestDeserialize: (bytes) => {
            decoded += 1;
            return method.requestDeserialize(bytes);
          },
        }
      : method,
  };
  if (layers.tally) rls.releaseClosedStreams();
  const server = new grpc.Server(options);
  server.addService(definition, {
    ShouldRateLimit: (call, callback) => {
      if (!layers.tally) return callback(null, RESPONSE);
      rls.releaseWhenEnded(call);
      const callInfo = info.callInfo(call);
      if (call.request.domain === undefined) callback({ code: grpc.status.INVALID_ARGUMENT }, null);
      info.echoRequestId(call, callInfo);
      callback(null, RESPONSE);
    },
  });
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => {
    if (error) throw error;
    process.stdout.write(`listening ${bound}\n`);
  });
  return { close: () => server.forceShutdown(), decoded: () => decoded };
}

/** RlsCallGate's shape, its read timer left out: what the timer costs is the gate's row minus this one. */
function checkingInterceptor(grpc) {
  let inflight = 0;
  return (_method, call) => {
    let admitted = false;
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, proceed) => {
            if (metadata.get('authorization')[0] !== TOKEN || !call.getPeer())
              return call.sendStatus({
                code: grpc.status.UNAUTHENTICATED,
                details: 'unauthenticated',
                metadata: null,
              });
            if (inflight >= MAX_INFLIGHT)
              return call.sendStatus({
                code: grpc.status.UNAVAILABLE,
                details: 'overloaded',
                metadata: null,
              });
            inflight += 1;
            admitted = true;
            proceed(metadata);
          },
          onReceiveHalfClose: (proceed) => proceed(),
          onCancel: () => {
            if (!admitted) return;
            admitted = false;
            inflight -= 1;
          },
        }),
    });
  };
}

const VARIANTS = {
  http2: () => serveHttp2(false),
  'http2-gated': () => serveHttp2(true),
  'grpc-js': () => serveGrpcJs({}),
  'grpc-js-opts': () => serveGrpcJs({ options: true }),
  'grpc-js-check': () => serveGrpcJs({ options: true, check: true }),
  'grpc-js-gate': () => serveGrpcJs({ options: true, gate: true }),
  'tally-bare': () => serveGrpcJs({ options: true, tally: true }),
  'tally-check': () => serveGrpcJs({ options: true, check: true, tally: true }),
  tally: () => serveGrpcJs({ options: true, gate: true, tally: true }),
  'tally-baseline': () => serveGrpcJs({ options: true, gate: true, tally: true }),
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
