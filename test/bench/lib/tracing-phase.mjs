// The tracing phase of the hot-path bench: what OpenTelemetry costs the decision API. Three APIs on
// the same Redis, one per case: tracing off (the default), on at a 1 % sample ratio, on at 100 %
// (for reference); each case takes POST /v1/decisions at the same fixed rate (no caller
// `traceparent`: every decision is a new trace, sampled at the ratio), in rounds whose case order
// rotates. Per case: CPU per decision (utime + stime of the API process from /proc over the measured
// window, divided by the decisions answered) and the latency percentiles; the ratios against "off"
// are taken within each round (the cases ran back to back) and the median over the rounds printed.
// Spans are exported over OTLP/HTTP to a sink in this process that answers 200 and counts them, so
// the export is paid as in production. No relay runs: the outbox grows, and is flushed between cases.
// Beside it, steadier than any whole-process figure on a busy machine: the tracing work of one
// decision alone, in this process (the built Tracing, what the decision span does: start under no
// caller context, eight attributes, the context handed on, end), CPU µs per decision over
// BENCH_TRACING_SPANS decisions, export to the same sink included (flushed at the end).
// Settings (env): BENCH_TRACING_SPANS (50000), BENCH_TRACING_RATE (1000 decisions/s), BENCH_TRACING_ROUNDS (BENCH_ROUNDS, 3),
// BENCH_DURATION / BENCH_WARMUP (the hot-path bench's). `npm run bench -- tracing` runs it alone;
// BENCH_TRACING=0 skips it in the hot-path bench.
import { createServer } from 'node:http';
import { measureHttp, round } from './load.mjs';
import { cpuSnapshot, cpuSpentMs } from './proc-cpu.mjs';
import { loadBuilt } from './built.mjs';
import { AUTH, startApi } from './servers.mjs';

const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
export const CASES = [
  { name: 'off', env: { TALLY_TRACING: 'off' } },
  { name: 'on, 1 %', env: { TALLY_TRACING: 'on', TALLY_TRACE_SAMPLE_RATIO: '0.01' } },
  { name: 'on, 100 %', env: { TALLY_TRACING: 'on', TALLY_TRACE_SAMPLE_RATIO: '1' } },
];

/** An OTLP/HTTP trace receiver that keeps nothing: answers 200 `{}` and counts requests and bytes. */
async function otlpSink() {
  const seen = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk) => (seen.bytes += chunk.length));
    req.on('end', () => {
      seen.requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, seen, stop: () => new Promise((r) => server.close(r)) };
}

let sequence = 0;
/** One decision per request, each on a new key (as the other fixed-rate phases load it). */
function requests() {
  return [
    {
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          selectors: { tenant: 'bench', principal: `trace-${sequence++}`, route: 'evaluate' },
          cost: 1,
        }),
      }),
    },
  ];
}

/** CPU µs per decision of the decision span's work alone, per case, in this process. */
async function spanWork(sinkUrl) {
  const { Tracing, SpanKind, sampledTraceparent } = loadBuilt('libs/observability/src/index.js');
  const decisions = int('BENCH_TRACING_SPANS', 50_000);
  const result = {};
  for (const { name, env } of CASES) {
    const tracing = Tracing.create({
      enabled: env.TALLY_TRACING === 'on',
      sampleRatio: Number(env.TALLY_TRACE_SAMPLE_RATIO ?? 0),
      endpoint: sinkUrl,
      serviceName: 'bench',
    });
    const run = async (n) => {
      for (let i = 0; i < n; i++) {
        const span = tracing.start('tally.decide', SpanKind.SERVER, undefined);
        if (span !== undefined) {
          span.setAttribute('tally.transport', 'http');
          span.setAttribute('tally.request_id', 'bench-request');
          span.setAttribute('tally.tenant', 'bench');
          span.setAttribute('tally.decision_count', 1);
          span.setAttribute('tally.decision_ids', ['01JD0000000000000000000001']);
          span.setAttribute('tally.outcomes', ['allowed']);
          span.setAttribute('tally.policies', ['bench']);
          span.setAttribute('tally.decision_id', '01JD0000000000000000000001');
          sampledTraceparent(span);
          span.end();
        }
        // Lets the batch processor export as it would between requests (its queue holds 2,048).
        if (i % 256 === 255) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await run(5_000); // warm-up: optimized code
    const before = process.cpuUsage();
    await run(decisions);
    await tracing.onApplicationShutdown(); // the last export
    const used = process.cpuUsage(before);
    result[name] = round((used.user + used.system) / decisions, 2);
  }
  return { decisions, cpuUsPerDecision: result };
}

/** @returns the per-case figures (means), the per-round ratios against "off" and their medians. */
export async function tracingPhase(store, settings, outDir, log) {
  const rate = int('BENCH_TRACING_RATE', 1000);
  const rounds = int('BENCH_TRACING_ROUNDS', settings.rounds);
  const sink = await otlpSink();
  const apis = [];
  try {
    log("tracing: the decision span's work alone, in this process");
    const work = await spanWork(sink.url);
    for (const c of CASES) {
      const env = { ...c.env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
      apis.push({ ...c, api: await startApi(store, settings, outDir, log, env) });
    }
    const perRound = [];
    for (let n = 0; n < rounds; n++) {
      const order = apis.map((_, i) => apis[(i + n) % apis.length]);
      const measured = {};
      for (const { name, api } of order) {
        await store.flush();
        log(
          `tracing round ${n + 1}/${rounds}: ${name}, ${rate} decisions/s for ${settings.durationSeconds} s`,
        );
        // The warmup (thrown away) runs before the CPU window opens.
        await measureHttp({
          ...settings,
          url: api.decisionsUrl,
          body: '',
          headers: AUTH,
          connections: 20,
          pipelining: 1,
          overallRate: rate,
          requests: requests(),
          durationSeconds: settings.warmupSeconds,
          warmupSeconds: 0,
        });
        const before = cpuSnapshot([api.pid]);
        const m = await measureHttp({
          ...settings,
          url: api.decisionsUrl,
          body: '',
          headers: AUTH,
          connections: 20,
          pipelining: 1,
          overallRate: rate,
          requests: requests(),
          warmupSeconds: 0,
        });
        const cpuMs = cpuSpentMs(before, cpuSnapshot([api.pid]));
        measured[name] = {
          ok: m.ok,
          cpuUsPerDecision: m.ok > 0 && cpuMs !== null ? round((cpuMs * 1000) / m.ok, 1) : null,
          latencyMs: m.latencyMs,
          loadAvg1m: m.loadAvg1m,
        };
      }
      perRound.push(measured);
    }
    const ratio = (a, b) => (a && b ? round(a / b, 3) : null);
    const ratios = perRound.map((r) =>
      Object.fromEntries(
        CASES.slice(1).map(({ name }) => [
          name,
          {
            cpu: ratio(r[name].cpuUsPerDecision, r.off.cpuUsPerDecision),
            p50: ratio(r[name].latencyMs.p50, r.off.latencyMs.p50),
            p99: ratio(r[name].latencyMs.p99, r.off.latencyMs.p99),
          },
        ]),
      ),
    );
    const median = (xs) => {
      const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
      return s.length === 0 ? null : s[Math.floor(s.length / 2)];
    };
    const medians = Object.fromEntries(
      CASES.slice(1).map(({ name }) => [
        name,
        Object.fromEntries(['cpu', 'p50', 'p99'].map((k) => [k, median(ratios.map((r) => r[name][k]))])),
      ]),
    );
    const mean = (name, pick) => round(perRound.reduce((s, r) => s + (pick(r[name]) ?? 0), 0) / rounds, 2);
    const cases = Object.fromEntries(
      CASES.map(({ name }) => [
        name,
        {
          cpuUsPerDecision: mean(name, (x) => x.cpuUsPerDecision),
          p50Ms: mean(name, (x) => x.latencyMs.p50),
          p99Ms: mean(name, (x) => x.latencyMs.p99),
        },
      ]),
    );
    return {
      settings: { rate, rounds, durationSeconds: settings.durationSeconds },
      work,
      cases,
      ratios: medians,
      perRound,
      ratiosPerRound: ratios,
      exported: { ...sink.seen },
    };
  } finally {
    for (const { api } of apis) await api.stop();
    await sink.stop();
  }
}

export function printTracing(t, log) {
  const { rate, rounds, durationSeconds } = t.settings;
  log(
    `tracing: HTTP at ${rate} decisions/s, ${durationSeconds} s per case, ${rounds} rounds (ratios: median over rounds, against "off" in the same round)`,
  );
  for (const { name } of CASES) {
    const c = t.cases[name];
    const r = t.ratios[name];
    const vs = r ? `  ×${r.cpu} CPU, ×${r.p50} p50, ×${r.p99} p99 of "off"` : '';
    log(
      `  ${name.padEnd(10)} ${String(c.cpuUsPerDecision).padStart(6)} µs CPU/decision, p50 ${c.p50Ms} ms, p99 ${c.p99Ms} ms${vs}`,
    );
  }
  log(
    `  OTLP requests to the sink (both parts): ${t.exported.requests}, ${Math.round(t.exported.bytes / 1024)} KiB`,
  );
  const w = t.work.cpuUsPerDecision;
  log(
    `tracing work alone (in-process, ${t.work.decisions} decisions): ` +
      CASES.map(({ name }) => `${name} ${w[name]} µs`).join(', ') +
      ' of CPU per decision',
  );
}
