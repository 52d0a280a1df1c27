// The load of one RLS case against one side, the same for both sides of a comparison:
//   grpc-1  ShouldRateLimit, 1 descriptor per call          ghz, Envoy's rls.proto
//   grpc-4  ShouldRateLimit, 4 descriptors per call (4 rules of one tenant)
//   http    the peer's POST /json vs Tally's POST /v1/decisions, autocannon
// Every call is of a tenant not seen in the run so far (`t<request number>`): many keys, no hot counter.
import { availableParallelism } from 'node:os';
import { findGhz, measureGrpc } from './ghz.mjs';
import { measureHttp } from './load.mjs';
import { descriptors, GRPC_DOMAIN } from './rls-configs.mjs';

export const RLS_CASES = ['grpc-1', 'grpc-4', 'http'];

const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);

/** The settings every RLS bench shares (env): rounds, their length, the load's shape, Tally's shape. */
export function rlsSettings() {
  return {
    rounds: int('BENCH_ROUNDS', 3),
    durationSeconds: int('BENCH_DURATION', 10),
    warmupSeconds: int('BENCH_WARMUP', 2),
    concurrency: int('BENCH_CONCURRENCY', 50),
    // ghz spreads the concurrency over them, as Envoy's workers each hold one.
    grpcConnections: int('BENCH_GRPC_CONNECTIONS', 10),
    workers: process.env.BENCH_RLS_WORKERS ?? 'auto',
    shards: 64,
    partitions: 12,
    cpus: availableParallelism(),
    node: process.version,
  };
}

/** ghz when a gRPC case is asked for (found or installed, see ghz.mjs), else null. */
export function ghzFor(cases, log) {
  return cases.some((c) => c.startsWith('grpc')) ? findGhz(log) : null;
}

/**
 * `(seconds) => measurement` of case `name` against `side`. `o`: `{ ghz, concurrency,
 * grpcConnections, rate? }`; `rate` = a fixed rate of calls per second (ghz `--rps`, autocannon
 * `overallRate`) instead of as fast as the side answers.
 */
export function caseLoad(name, side, o) {
  const tenant = 't{{.RequestNumber}}';
  if (name === 'grpc-1' || name === 'grpc-4') {
    const data = { domain: GRPC_DOMAIN, descriptors: descriptors(name === 'grpc-1' ? 1 : 4, tenant) };
    const grpc = {
      bin: o.ghz,
      target: side.grpcTarget,
      data,
      metadata: side.metadata,
      concurrency: o.concurrency,
      connections: o.grpcConnections,
      rps: o.rate,
    };
    return (seconds) => measureGrpc(grpc, seconds);
  }
  if (name === 'http') {
    let n = 0;
    const requests = [{ setupRequest: (req) => ({ ...req, body: side.httpBody(`t${n++}`) }) }];
    return (seconds) =>
      measureHttp({
        url: side.httpUrl,
        body: side.httpBody('t'),
        headers: side.httpHeaders,
        connections: o.concurrency,
        pipelining: 1,
        warmupSeconds: 0,
        durationSeconds: seconds,
        requests,
        overallRate: o.rate,
      });
  }
  throw new Error(`unknown case ${name}; one of ${RLS_CASES.join(', ')}`);
}
