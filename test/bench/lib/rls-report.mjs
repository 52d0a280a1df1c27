// The RLS bench's figures: per case and side the means over the rounds, Tally/peer ratios taken
// within each round (its two sides ran back to back) with their median and spread, and the table.
import { round } from './load.mjs';
import { median } from './report.mjs';

const mean = (xs) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 1);

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

// ghz cuts the calls in flight when its duration ends (`transport is closing`; ghz 0.120: `use of
// closed network connection` on its own side of the socket): not an answer.
const CUT = /transport is closing|client connection is closing|use of closed network connection/;

/** Answers other than OK/2xx, the calls ghz cut at the end of a run left out (counted apart). */
export function failuresOf(m) {
  if (m.statusCodes) {
    const other = Object.entries(m.statusCodes).filter(([code]) => !code.startsWith('2'));
    return { failed: other.reduce((n, [, c]) => n + c, 0), detail: Object.fromEntries(other), cut: 0 };
  }
  const detail = {};
  let cut = 0;
  for (const [error, count] of Object.entries(m.errors ?? {})) {
    if (CUT.test(error)) cut += count;
    else detail[error.replace(/^rpc error: /, '')] = count;
  }
  return { failed: Object.values(detail).reduce((a, b) => a + b, 0), detail, cut };
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
  const redisCommands = Object.fromEntries([...commands].map((c) => [c, commandCost(measurements, c)]));
  // A script's inner commands are counted in EVALSHA and again on their own: with a script, its
  // EVALSHA is the decision's Redis cost; without one, the commands' sum is.
  const script = redisCommands.evalsha;
  const decisionRedisUsPerCall = script
    ? round(script.usPerCall * script.perRequest, 1)
    : mean(measurements.map((m) => m.redis.commandUsPerCall));
  const serverCpuUsPerCall = mean(measurements.map((m) => m.serverCpuUsPerCall));
  const redisCpuUsPerCall = mean(measurements.map((m) => m.redis.processCpuUsPerCall));
  const ledgerCpuUsPerCall =
    measurements[0].ledgerCpuUsPerCall === null ? null : mean(measurements.map((m) => m.ledgerCpuUsPerCall));
  const totalCpuUsPerCall = round(serverCpuUsPerCall + redisCpuUsPerCall + (ledgerCpuUsPerCall ?? 0), 1);
  const failures = measurements.map(failuresOf);
  return {
    okPerSec: mean(measurements.map((m) => m.okPerSec)),
    okPerSecRounds: measurements.map((m) => m.okPerSec),
    p50: mean(measurements.map((m) => m.latencyMs.p50)),
    p99: mean(measurements.map((m) => m.latencyMs.p99)),
    p99Rounds: measurements.map((m) => m.latencyMs.p99),
    serverCpuUsPerCall,
    serverCpuRounds: measurements.map((m) => m.serverCpuUsPerCall),
    ledgerCpuUsPerCall,
    redisCpuUsPerCall,
    decisionRedisUsPerCall,
    /** Server + its Redis (+ the ledger): the calls/s this side could answer with all cores to itself. */
    totalCpuUsPerCall,
    cpuBoundPerSec: Math.round((1e6 * measurements[0].cores) / totalCpuUsPerCall),
    redisCommands,
    memory: [...byProcess.values()],
    failed: failures.reduce((n, f) => n + f.failed, 0),
    failures: failures.reduce((all, f) => {
      for (const [what, n] of Object.entries(f.detail)) all[what] = (all[what] ?? 0) + n;
      return all;
    }, {}),
    cut: failures.reduce((n, f) => n + f.cut, 0),
    requests: measurements.reduce((n, m) => n + m.requests, 0),
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
      `${settings.grpcConnections} gRPC connections, Tally workers ${settings.workers}, ` +
      `relay ${settings.relay ? 'on' : 'off'}, ${settings.cpus} cores, ` +
      `load avg at the end ${record.loadAvg.map((x) => round(x, 2)).join(' ')}`,
  ];
  for (const [name, r] of Object.entries(results)) {
    lines.push('', `${name}:`);
    for (const [side, s] of Object.entries(r.sides)) {
      const redis = Object.entries(s.redisCommands)
        .filter(([, c]) => c && c.perRequest >= 0.01)
        .map(([c, v]) => `${c} ${v.usPerCall} µs × ${v.perRequest}`)
        .join(', ');
      lines.push(
        `  ${side.padEnd(6)} ${s.okPerSec} ok/s (rounds ${s.okPerSecRounds.join(' ')}), p50 ${s.p50} ms, ` +
          `p99 ${s.p99} ms (${s.p99Rounds.join(' ')})`,
        `         server CPU ${s.serverCpuUsPerCall} µs/call (${s.serverCpuRounds.join(' ')}), ` +
          `Redis process ${s.redisCpuUsPerCall} µs/call` +
          (s.ledgerCpuUsPerCall === null ? '' : `, ledger (relay + broker) ${s.ledgerCpuUsPerCall} µs/call`) +
          ` = ${s.totalCpuUsPerCall} µs/call: ≤ ${s.cpuBoundPerSec} calls/s on these cores alone`,
        `         Redis commandstats: ${s.decisionRedisUsPerCall} µs per call for the decision [${redis}]`,
        `         RSS: ${mb(s.memory)}`,
        `         failed ${s.failed} of ${s.requests}${s.failed > 0 ? ` ${JSON.stringify(s.failures)}` : ''}; ` +
          `${s.cut} cut by the end of a run`,
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
