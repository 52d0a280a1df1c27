// Ratios against the ceilings measured in the same run, the summary table, the JSON record.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { round } from './load.mjs';

// Counts add up over rounds; rates, latencies and load averages are averaged.
const SUMMED = new Set([
  'requests',
  'ok',
  'errors',
  'timeouts',
  'non2xx',
  'mismatches',
  'codes',
  'statusCodes',
  'checks',
  'failedChecks',
]);

/** The rounds of one measurement folded into one (same shape). */
export function meanOf(items, sum = false) {
  const first = items[0];
  if (typeof first === 'number') {
    const total = items.reduce((a, b) => a + (b ?? 0), 0);
    return sum ? total : round(total / items.length, 2);
  }
  if (Array.isArray(first))
    return first.map((_, i) =>
      meanOf(
        items.map((x) => x[i]),
        sum,
      ),
    );
  if (first === null || typeof first !== 'object') return first;
  const keys = new Set(items.flatMap((x) => Object.keys(x)));
  return Object.fromEntries(
    [...keys].map((k) => [
      k,
      meanOf(
        items.map((x) => x[k] ?? 0),
        sum || SUMMED.has(k),
      ),
    ]),
  );
}

export const TARGETS = { apiThroughputRatio: 0.85, apiP99Ratio: 1.2, batchRatio: 0.7 };

export function ratios(figures) {
  const { ceiling, api, batch } = figures;
  return {
    // Answered requests only: a fast 503 (breaker open, overload) is not throughput.
    apiThroughputRatio: round(api.okPerSec / ceiling.okPerSec, 3),
    apiP99Ratio: round(api.latencyMs.p99 / ceiling.latencyMs.p99, 3),
    batchRatio: round(batch.api.checksPerSec / batch.raw.checksPerSec, 3),
  };
}

/** The median of numbers (an even count: the mean of the middle two, to 3 decimals); null when none. */
export function median(values) {
  const v = values.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : round((v[mid - 1] + v[mid]) / 2, 3);
}

/** Each ratio's median over the rounds (the rounds' own pairs ran back to back). */
export function medianRatios(perRound) {
  return Object.fromEntries(Object.keys(perRound[0]).map((k) => [k, median(perRound.map((r) => r[k]))]));
}

export function verdicts(r) {
  return {
    apiThroughputRatio: r.apiThroughputRatio >= TARGETS.apiThroughputRatio,
    apiP99Ratio: r.apiP99Ratio <= TARGETS.apiP99Ratio,
    batchRatio: r.batchRatio >= TARGETS.batchRatio,
  };
}

const codes = (m) =>
  Object.entries(m.codes ?? {})
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
const failures = (m) => `${m.errors + m.timeouts} err, ${m.non2xx} non-2xx ${codes(m)}`.trim();

export function printSummary(figures, r, v, perRound) {
  const { ceiling, api, batch, settings } = figures;
  // Rates are printed whole; latencies and ratios keep their decimals.
  const cell = (c) => (typeof c === 'number' && c >= 1000 ? Math.round(c) : c);
  const row = (cells) => cells.map((c, i) => String(cell(c)).padEnd(i === 0 ? 34 : 19)).join('');
  const mark = (ok) => (ok ? 'met' : 'MISSED');
  const lines = [
    '',
    `hot path, ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.warmupSeconds}s warmup + ${settings.durationSeconds}s per phase, ` +
      `means of ${settings.rounds} alternating rounds, ${settings.cpus} cores, ` +
      `load avg ${figures.ceiling.loadAvg1m[0]}–${figures.api.loadAvg1m[1]}`,
    row(['phase', '2xx req/s', 'p50 ms', 'p99 ms', 'failures']),
    row([
      'ceiling: Fastify + 1 EVALSHA',
      ceiling.okPerSec,
      ceiling.latencyMs.p50,
      ceiling.latencyMs.p99,
      failures(ceiling),
    ]),
    row([
      'decision API POST /v1/decisions',
      api.okPerSec,
      api.latencyMs.p50,
      api.latencyMs.p99,
      failures(api),
    ]),
    '',
    row(['batch', 'answered checks/s', 'call p50 ms', 'call p99 ms', 'failures']),
    row([
      `raw EVALSHA, ${settings.batchConcurrency}×pipeline of ${settings.batchSize}`,
      batch.raw.checksPerSec,
      batch.raw.pipelineLatencyMs.p50,
      batch.raw.pipelineLatencyMs.p99,
      `${batch.raw.failedChecks} failed checks`,
    ]),
    row([
      `API :batch, ${settings.batchConcurrency} conns × ${settings.batchSize}`,
      batch.api.checksPerSec,
      batch.api.latencyMs.p50,
      batch.api.latencyMs.p99,
      `${failures(batch.api)} (${batch.api.mismatches} calls with a refused result)`,
    ]),
    '',
    row(['ratio (median of rounds)', 'measured', 'target', '', 'per round']),
    row([
      'API / ceiling throughput',
      r.apiThroughputRatio,
      `≥ ${TARGETS.apiThroughputRatio}`,
      mark(v.apiThroughputRatio),
      perRound.map((x) => x.apiThroughputRatio).join(' '),
    ]),
    row([
      'API p99 / ceiling p99',
      r.apiP99Ratio,
      `≤ ${TARGETS.apiP99Ratio}`,
      mark(v.apiP99Ratio),
      perRound.map((x) => x.apiP99Ratio).join(' '),
    ]),
    row([
      'batch / raw EVALSHA checks/s',
      r.batchRatio,
      `≥ ${TARGETS.batchRatio}`,
      mark(v.batchRatio),
      perRound.map((x) => x.batchRatio).join(' '),
    ]),
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

export function writeJson(path, record) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(record, null, 2) + '\n');
}
