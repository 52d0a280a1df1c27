// The floor: a Node server on the design's stack doing envoyproxy/ratelimit's work and nothing else,
// so the steady bench can tell what the platform costs per decision from what Tally adds to it.
// Per call, per descriptor, one pipelined `INCRBY <domain>_<key>_<value>_<second> 1` + `EXPIRE <it> 1`
// (the peer's fixed-window cache); no auth, no validation, no policy match, no Lua, no idempotency,
// no outbox, no metrics, no logs. Served like Tally's API: a cluster primary forking `BENCH_FLOOR_WORKERS`
// workers (`auto`: one per core), each with the engine's hot-path Redis client (one connection,
// writes coalesced per event-loop turn) and
//   - HTTP: Fastify (the API's adapter and version), `POST /json` with the peer's body
//     (`{ domain, descriptors: [{ entries: [{ key, value }] }] }`), the peer's answer's shape;
//   - gRPC: `ShouldRateLimit` on node:http2 with the framing done by hand (the 5-byte prefix,
//     protobufjs decode and encode as @grpc/proto-loader builds them, `grpc-status` in trailers):
//     the cheapest gRPC server measured in grpc-layers.bench.mjs.
// Env: BENCH_FLOOR_HTTP_PORT, BENCH_FLOOR_GRPC_PORT, BENCH_FLOOR_REDIS_URL, BENCH_FLOOR_WORKERS.
// Prints `floor worker <pid> listening` once per worker.
import cluster from 'node:cluster';
import { createServer } from 'node:http2';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { hotPathRedis, loadBuilt, ROOT } from './lib/built.mjs';

/** Far above any load: every call is allowed and counted, as the peer's bench limits are. */
const LIMIT = 1_000_000_000;
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

if (cluster.isPrimary) {
  const asked = process.env.BENCH_FLOOR_WORKERS ?? 'auto';
  const count = asked === 'auto' ? availableParallelism() : Number(asked);
  for (let i = 0; i < count; i++) cluster.fork();
  // A worker that dies ends the side: the bench must not measure half a server.
  cluster.on('exit', () => process.exit(1));
  process.once('SIGTERM', () => {
    cluster.removeAllListeners('exit');
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  await serveWorker();
}

async function serveWorker() {
  const redis = hotPathRedis(process.env.BENCH_FLOOR_REDIS_URL);
  await new Promise((resolve, reject) => {
    redis.once('ready', resolve);
    redis.once('error', reject);
  });

  /** The peer's work for one call: one counter per descriptor, in one pipeline. */
  const count = async (domain, descriptors) => {
    const second = Math.floor(Date.now() / 1000);
    const pipeline = redis.pipeline();
    for (const d of descriptors) {
      let key = domain;
      for (const e of d.entries) key += `_${e.key}_${e.value}`;
      key += `_${second}`;
      pipeline.incrby(key, 1).expire(key, 1);
    }
    const replies = await pipeline.exec();
    return descriptors.map((_, i) => LIMIT - Number(replies[2 * i][1]));
  };

  const Fastify = createRequire(join(ROOT, 'package.json'))('fastify');
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
  app.post('/json', async (request) => {
    const { domain, descriptors } = request.body;
    const remaining = await count(domain, descriptors);
    return {
      overallCode: 'OK',
      statuses: remaining.map((limitRemaining) => ({
        code: 'OK',
        currentLimit: { requestsPerUnit: LIMIT, unit: 'SECOND' },
        limitRemaining,
      })),
    };
  });
  await app.listen({ port: Number(process.env.BENCH_FLOOR_HTTP_PORT), host: '127.0.0.1' });

  const method = loadBuilt('libs/envoy-rls/src/index.js').loadRateLimitService().definition.ShouldRateLimit;
  const grpc = createServer({ maxSessionMemory: 1e9 });
  const fail = (stream, code, message) =>
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': code, 'grpc-message': message },
      { endStream: true },
    );
  grpc.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers[':path'] !== PATH) return fail(stream, '12', 'unknown method');
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      const frame = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      if (frame.length < 5 || frame[0] !== 0) return fail(stream, '13', 'bad frame');
      const request = method.requestDeserialize(frame.subarray(5, 5 + frame.readUInt32BE(1)));
      count(request.domain, request.descriptors).then(
        (remaining) => {
          if (stream.destroyed) return;
          const body = method.responseSerialize({
            overall_code: 'OK',
            statuses: remaining.map((limit_remaining) => ({
              code: 'OK',
              current_limit: { requests_per_unit: LIMIT, unit: 'SECOND' },
              limit_remaining,
              duration_until_reset: { seconds: 1, nanos: 0 },
            })),
          });
          const out = Buffer.allocUnsafe(5 + body.length);
          out[0] = 0;
          out.writeUInt32BE(body.length, 1);
          body.copy(out, 5);
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
          stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
          stream.end(out);
        },
        (error) => !stream.destroyed && fail(stream, '14', String(error.message)),
      );
    });
  });
  await new Promise((resolve) =>
    grpc.listen(Number(process.env.BENCH_FLOOR_GRPC_PORT), '127.0.0.1', resolve),
  );
  process.stdout.write(`floor worker ${process.pid} listening\n`);

  process.once('SIGTERM', () => {
    grpc.close();
    void app.close().finally(() => redis.disconnect());
    process.exit(0);
  });
}
