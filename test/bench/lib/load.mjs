// The one load generator of the run (autocannon, in this process): every HTTP phase gets the same
// settings, a warmup that is thrown away, then the measured run.
import { loadavg } from 'node:os';
import autocannon from 'autocannon';

/**
 * autocannon's own histogram keeps whole milliseconds, too coarse for a p99 ratio of sub-10 ms
 * latencies; the 2xx response times it measures (hrtime, fractional ms) are kept here instead.
 */
function run(options, latencies) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    if (latencies)
      instance.on('response', (_client, status, _bytes, ms) => {
        if (status >= 200 && status < 300) latencies.push(ms);
      });
  });
}

function percentile(sorted, p) {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** p50/p90/p99/max of fractional milliseconds, rounded to 0.01 ms. */
export function latencySummary(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (p) => round(percentile(sorted, p), 2);
  return { p50: at(50), p90: at(90), p99: at(99), max: round(sorted.at(-1) ?? 0, 2) };
}

/**
 * Counts the `code` of every refused or failed decision in response bodies (a batch body holds many):
 * a 503 `backend.timeout` and a 503 `server.overloaded` are different findings. An allowed decision
 * has `"code":null`, so a body is clean when it names no code at all.
 */
export function codeTally() {
  const counts = {};
  const verify = (body) => {
    let clean = true;
    for (const m of body.matchAll(/"code":"([^"]+)"/g)) {
      counts[m[1]] = (counts[m[1]] ?? 0) + 1;
      clean = false;
    }
    return clean;
  };
  return { counts, verify };
}

/**
 * @param {{ url: string, body: string, headers?: Record<string,string>, connections: number,
 *   pipelining: number, warmupSeconds: number, durationSeconds: number, requests?: object[],
 *   overallRate?: number }} o
 *   `requests`: autocannon's request list, e.g. a `setupRequest` that varies the body per request;
 *   `overallRate`: requests per second over all connections (a fixed rate), else as fast as answered.
 */
export async function measureHttp(o) {
  const base = {
    url: o.url,
    method: 'POST',
    body: o.body,
    headers: { 'content-type': 'application/json', ...o.headers },
    connections: o.connections,
    pipelining: o.pipelining,
    ...(o.requests ? { requests: o.requests } : {}),
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
  };
  if (o.warmupSeconds > 0) await run({ ...base, duration: o.warmupSeconds });
  const loadBefore = loadavg()[0];
  const latencies = [];
  const codes = codeTally();
  const r = await run({ ...base, duration: o.durationSeconds, verifyBody: codes.verify }, latencies);
  const ok = r['2xx'];
  return {
    requests: r.requests.total,
    ok,
    reqPerSec: round(r.requests.average),
    okPerSec: round(ok / r.duration),
    latencyMs: latencySummary(latencies),
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])),
    /** Responses naming at least one decision code (for a batch: calls with a refused/failed result). */
    mismatches: r.mismatches,
    /** Decision codes seen, per decision (a batch call counts each of its results). */
    codes: codes.counts,
    durationSeconds: r.duration,
    /** 1-minute load average before and after: how much else the shared machine was doing. */
    loadAvg1m: [round(loadBefore, 2), round(loadavg()[0], 2)],
  };
}

export function round(n, digits = 0) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
