// The RLS bench's figures: per case and side the means over the rounds, Tally/peer ratios taken
// within each round (its two sides ran back to back) with their median and spread, and the table.
import { round } from './load.mjs';

const mean = (xs) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 1);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : round((s[s.length / 2 - 1] + s[s.length / 2]) / 2, 3);
};

/** µs per call of `command` over the rounds (sum of usec / sum of calls), and its calls per call. */
function commandCost(measurements, command) {
  let usec = 0;
  let calls = 0;
  let requests = 0;
  for (const m of measurements) {
    usec += m.redis.commands[command]?.usec ?? 0;
    calls += m.redis.commands[command]?.calls ?? 0;
    requests += m.requests;
  }
  return calls === 0 ? null : { usPerCall: round(usec / calls, 2), perRequest: round(calls / requests, 2) };
}

function sideSummary(measurements) {
  const commands = new Set(measurements.flatMap((m) => Object.keys(m.redis.commands)));
  const byProcess = new Map();
  for (const m of measurements)
    for (const p of m.memory) {
      const seen = byProcess.get(p.pid) ?? { pid: p.pid, what: p.what, rss: 0, peak: 0 };
      byProcess.set(p.pid, {
        ...seen,
        rss: Math.max(seen.rss, p.rss ?? 0),
        peak: Math.max(seen.peak, p.peak ?? 0),
      });
    }
  return {
    okPerSec: mean(measurements.map((m) => m.okPerSec)),
    okPerSecRounds: measurements.map((m) => m.okPerSec),
    p50: mean(measurements.map((m) => m.latencyMs.p50)),
    p99: mean(measurements.map((m) => m.latencyMs.p99)),
    p99Rounds: measurements.map((m) => m.latencyMs.p99),
    serverCpuUsPerCall: mean(measurements.map((m) => m.serverCpuUsPerCall)),
    serverCpuRounds: measurements.map((m) => m.serverCpuUsPerCall),
    ledgerCpuUsPerCall:
      measurements[0].ledgerCpuUsPerCall === null
        ? null
        : mean(measurements.map((m) => m.ledgerCpuUsPerCall)),
    redisCpuUsPerCall: mean(measurements.map((m) => m.redis.processCpuUsPerCall)),
    redisCommandUsPerCall: mean(measurements.map((m) => m.redis.commandUsPerCall)),
    redisCommands: Object.fromEntries([...commands].map((c) => [c, commandCost(measurements, c)])),
    memory: [...byProcess.values()],
    failures: measurements.map((m) => ({ statuses: m.statuses ?? m.statusCodes, errors: m.errors })),
    loadAvg1m: measurements.map((m) => m.loadAvg1m),
  };
}

export function summarizeCase(rounds, sides) {
  const summary = Object.fromEntries(sides.map((s) => [s, sideSummary(rounds.map((r) => r[s]))]));
  if (!sides.includes('peer')) return { sides: summary, rounds };
  const throughput = rounds.map((r) => round(r.tally.okPerSec / r.peer.okPerSec, 3));
  const p99 = rounds.map((r) => round(r.tally.latencyMs.p99 / r.peer.latencyMs.p99, 3));
  const cpu = rounds.map((r) => round(r.tally.serverCpuUsPerCall / r.peer.serverCpuUsPerCall, 3));
  const ratio = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), rounds: xs });
  return {
    sides: summary,
    ratios: { throughput: ratio(throughput), p99: ratio(p99), cpu: ratio(cpu) },
    rounds,
  };
}

const mb = (memory) =>
  memory
    .filter((p) => p.rss > 0)
    .map((p) => `${p.what} ${p.rss} MB (peak ${p.peak})`)
    .join('; ');

export function printRlsSummary(record) {
  const { settings, results } = record;
  const lines = [
    '',
    `Envoy RLS: Tally vs envoyproxy/ratelimit — ${settings.rounds} alternating rounds of ` +
      `${settings.durationSeconds} s (+${settings.warmupSeconds} s warmup), concurrency ${settings.concurrency}, ` +
      `${settings.grpcConnections} gRPC connections, Tally workers ${settings.workers}, ${settings.cpus} cores, ` +
      `load avg at the end ${record.loadAvg.map((x) => round(x, 2)).join(' ')}`,
  ];
  for (const [name, r] of Object.entries(results)) {
    lines.push('', `${name}:`);
    for (const [side, s] of Object.entries(r.sides)) {
      const redis = Object.entries(s.redisCommands)
        .filter(([, c]) => c && c.perRequest >= 0.5)
        .map(([c, v]) => `${c} ${v.usPerCall} µs × ${v.perRequest}`)
        .join(', ');
      lines.push(
        `  ${side.padEnd(6)} ${s.okPerSec} ok/s (rounds ${s.okPerSecRounds.join(' ')}), p50 ${s.p50} ms, ` +
          `p99 ${s.p99} ms (${s.p99Rounds.join(' ')})`,
        `         server CPU ${s.serverCpuUsPerCall} µs/call (${s.serverCpuRounds.join(' ')})` +
          (s.ledgerCpuUsPerCall === null ? '' : `, ledger (relay + broker) ${s.ledgerCpuUsPerCall} µs/call`),
        `         Redis: process ${s.redisCpuUsPerCall} µs/call, commands ${round(s.redisCommandUsPerCall, 1)} µs/call [${redis}]`,
        `         RSS: ${mb(s.memory)}`,
        `         answers: ${JSON.stringify(s.failures.map((f) => f.statuses))}` +
          (s.failures.some((f) => Object.keys(f.errors ?? {}).length > 0)
            ? ` errors ${JSON.stringify(s.failures.map((f) => f.errors))}`
            : ''),
      );
    }
    if (r.ratios) {
      const show = (x) => `${x.median} (rounds ${x.rounds.join(' ')}; spread ${x.min}–${x.max})`;
      lines.push(
        `  Tally/peer: throughput ${show(r.ratios.throughput)}, p99 ${show(r.ratios.p99)}, ` +
          `server CPU per call ${show(r.ratios.cpu)}`,
      );
    }
  }
  process.stdout.write(lines.join('\n') + '\n\n');
}
