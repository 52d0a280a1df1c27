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
// With BENCH_FLOOR_POLICIES (a Tally policy file) it is the floor of the contract instead: per
// descriptor, in place of the two counters, the decision's one atomic step, decide.lua (`tallyDecide`,
// the API's own script, outbox entry and all) on Tally's Redis, whose relay ships what it writes.
// Its arguments come from a template planned once per domain and descriptor shape by the engine
// (the tenant, its shard and the decision id put in per call): no policy match, no validation, no
// token, no idempotency, no metrics per call. What it costs above the floor is what the contract's
// atomic step and ledger cost whoever serves them.
// Env: BENCH_FLOOR_HTTP_PORT, BENCH_FLOOR_GRPC_PORT, BENCH_FLOOR_REDIS_URL, BENCH_FLOOR_WORKERS,
// BENCH_FLOOR_POLICIES, BENCH_FLOOR_SHARDS (64).
// Prints `floor worker <pid> listening` once per worker.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http2';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { hotPathRedis, loadBuilt, loadEngine, ROOT } from './lib/built.mjs';

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
  const counters = async (domain, descriptors) => {
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
  const policies = process.env.BENCH_FLOOR_POLICIES;
  const count = policies
    ? contractStep(redis, readFileSync(policies, 'utf8'), Number(process.env.BENCH_FLOOR_SHARDS ?? 64))
    : counters;

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

// Placeholders: a tenant and an id no bench call sends, and a shard no key has.
const TENANT = 'zzTENANTzz';
const SHARD = '{s-}';
const ID = 'zzIDzz';
const PLACEHOLDERS = /(zzTENANTzz|\{s-\}|zzIDzz)/;

/**
 * The contract's step for one call: per descriptor one `tallyDecide` with the arguments of a template
 * (`templateOf`), in one pipeline; answers each first window's remaining, or the refusal's error.
 */
function contractStep(redis, policiesYaml, shards) {
  const engine = loadEngine();
  const { callDecide, defineDecide, parseDecideReply } = loadBuilt('libs/engine/src/decide.script.js');
  const { toDecisionRequests } = loadBuilt('libs/envoy-rls/src/index.js');
  const compiled = loadBuilt('libs/policy/src/index.js').compilePolicyFile(policiesYaml);
  if (!compiled.ok) throw new Error(`floor: ${JSON.stringify(compiled.errors)}`);
  defineDecide(redis);
  const templates = new Map();
  let sequence = 0;

  /**
   * The arguments of a decision of `descriptor` under `domain`, planned once per `shape` (the domain
   * and the entries, the tenant's value left out) with a placeholder tenant, shard and id: each
   * argument as its parts, the placeholders between them.
   */
  const templateOf = (domain, descriptor, shape) => {
    let template = templates.get(shape);
    if (template) return template;
    const entries = descriptor.entries.map((e) => (e.key === 'tenant' ? { key: e.key, value: TENANT } : e));
    const mapped = toDecisionRequests({ domain, descriptors: [{ entries }] }, { maxDescriptors: 8 });
    if (!mapped.ok) throw new Error(`floor: ${mapped.message}`);
    const planned = engine.planDecision(mapped.requests[0], {
      policySet: compiled.set,
      tokenSecret: '',
      shards,
      maxCost: 1_000_000,
      decisionId: ID,
    });
    if (!planned.ok) throw new Error(`floor: ${planned.refusal.message}`);
    const windows = planned.plan.windows.length;
    const shard = `{s${planned.plan.shard.shard}}`;
    const parts = engine
      .decideArgs(planned.plan, 0)
      .map((arg) => (typeof arg === 'string' ? arg.replaceAll(shard, SHARD).split(PLACEHOLDERS) : arg));
    template = { parts, windows };
    templates.set(shape, template);
    return template;
  };

  /** The arguments of one descriptor's decision and its template. */
  const argsOf = (domain, descriptor) => {
    // The tenant and the template's key in one pass over the entries.
    let tenant = '';
    let shape = domain;
    for (const e of descriptor.entries) {
      if (e.key === 'tenant') {
        tenant = e.value;
        shape += '\0tenant';
      } else shape += `\0${e.key}\0${e.value}`;
    }
    const shard = `{s${engine.shardOf(tenant, shards)}}`;
    const id = `01${String(++sequence).padStart(16, '0')}${String(process.pid).padStart(8, '0')}`;
    const template = templateOf(domain, descriptor, shape);
    const args = template.parts.map((arg) => {
      if (typeof arg !== 'object') return arg;
      let text = '';
      for (const part of arg)
        text += part === TENANT ? tenant : part === SHARD ? shard : part === ID ? id : part;
      return text;
    });
    return { args, template };
  };
  const remainingOf = (reply, { windows }) => {
    const outcome = parseDecideReply(reply, windows);
    if (outcome.kind !== 'allowed') throw new Error(`floor: decide.lua answered ${outcome.kind}`);
    return outcome.windows[0].remaining;
  };

  // One descriptor (Envoy's usual call) is one EVALSHA, as in the API; more share a pipeline.
  return async (domain, descriptors) => {
    if (descriptors.length === 1) {
      const { args, template } = argsOf(domain, descriptors[0]);
      return [remainingOf(await callDecide(redis, args), template)];
    }
    const pipeline = redis.pipeline();
    const planned = descriptors.map((descriptor) => {
      const { args, template } = argsOf(domain, descriptor);
      callDecide(pipeline, args);
      return template;
    });
    const replies = await pipeline.exec();
    return planned.map((template, i) => {
      const [error, reply] = replies[i];
      if (error) throw error;
      return remainingOf(reply, template);
    });
  };
}
