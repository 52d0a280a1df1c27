// The steady bench's figures: per case (grpc-1, http) and load (a fixed rate, saturation) the median
// over the rounds of each variant (Tally, Tally with the ledger paused, the peer), the ratios the
// targets are set in (each taken within a round, whose variants ran back to back, then its median),
// and the table.
import { round } from './load.mjs';
import { median } from './report.mjs';

/** What the targets ask of a build; `null` = not a target, printed for reading only. */
export const STEADY_TARGETS = {
  ledgerUs: 50,
  relayIdleMsPerSec: 3,
  cpuVsPeer: 1.5,
  saturation: { 'grpc-1': 0.6, http: 0.8 },
  lagP99Ms: 250,
};
export const VARIANTS = ['tally', 'paused', 'baseline', 'peer'];
const ROLES = ['server', 'redis-server', 'relay', 'kafka broker', 'projector'];

/** The ledger's CPU per decision in one round: relay + broker + what the relay adds to Redis. */
function ledgerUs(round_) {
  const on = round_.tally.cpuUs;
  const off = round_.paused?.cpuUs;
  const redisShare = off ? Math.max(0, on['redis-server'] - off['redis-server']) : null;
  return round((on.relay ?? 0) + on['kafka broker'] + (redisShare ?? 0), 1);
}

function variantSummary(ms) {
  const at = (pick) => median(ms.map(pick));
  return {
    okPerSec: at((m) => m.okPerSec),
    latencyMs: {
      p50: at((m) => m.latencyMs.p50),
      p90: at((m) => m.latencyMs.p90),
      p99: at((m) => m.latencyMs.p99),
    },
    cpuUs: Object.fromEntries(ROLES.filter((r) => r in ms[0].cpuUs).map((r) => [r, at((m) => m.cpuUs[r])])),
    totalCpuUs: at((m) => m.totalCpuUs),
    recordsPerRequest: at((m) => m.relay.recordsPerRequest),
    recordsPerDecision: at((m) => m.relay.perDecision),
    failed: ms.reduce((n, m) => n + m.failed, 0),
    cut: ms.reduce((n, m) => n + m.cut, 0),
    rounds: ms.map((m) => ({ okPerSec: m.okPerSec, totalCpuUs: m.totalCpuUs })),
  };
}

/** `rounds`: `[{ tally, paused?, baseline?, peer? }]` of one case and load. */
export function summarizeLoad(rounds) {
  const variants = VARIANTS.filter((v) => rounds[0][v] !== undefined);
  const sides = Object.fromEntries(variants.map((v) => [v, variantSummary(rounds.map((r) => r[v]))]));
  const per = (f) => {
    const xs = rounds.map(f);
    return { median: median(xs), rounds: xs };
  };
  const ratios = { ledgerUs: per(ledgerUs) };
  if (sides.peer) {
    ratios.cpuVsPeer = per((r) => round(r.tally.totalCpuUs / r.peer.totalCpuUs, 2));
    ratios.throughputVsPeer = per((r) => round(r.tally.okPerSec / r.peer.okPerSec, 2));
    if (sides.paused)
      ratios.pausedThroughputVsPeer = per((r) => round(r.paused.okPerSec / r.peer.okPerSec, 2));
  }
  if (sides.baseline) {
    ratios.cpuVsBaseline = per((r) => round(r.tally.totalCpuUs / r.baseline.totalCpuUs, 2));
    ratios.throughputVsBaseline = per((r) => round(r.tally.okPerSec / r.baseline.okPerSec, 2));
  }
  return { sides, ratios };
}

const num = (x) =>
  x === null || x === undefined ? 'n/a' : x >= 1000 ? Math.round(x).toLocaleString('en') : x;
const row = (cells) => cells.map((c, i) => String(c).padEnd(i === 0 ? 36 : 27)).join('');
const HEAD = { tally: 'Tally', paused: 'ledger paused', baseline: 'baseline build', peer: 'peer' };
/** The variants whose relay ships while measured (its /metrics read around the measurement). */
const SHIPS = new Set(['tally', 'baseline']);
const LABEL = { server: 'decision-api / ratelimit', projector: 'projector' };

function loadTable(title, s) {
  const vs = VARIANTS.filter((v) => s.sides[v]);
  const cell = (v, f) => {
    const x = f(s.sides[v]);
    return x === undefined ? '–' : num(x);
  };
  const lines = [title, row(['CPU µs per decision', ...vs.map((v) => HEAD[v])])];
  for (const role of ROLES) {
    if (!vs.some((v) => role in s.sides[v].cpuUs)) continue;
    lines.push(row([`  ${LABEL[role] ?? role}`, ...vs.map((v) => cell(v, (x) => x.cpuUs[role]))]));
  }
  lines.push(
    row(['  total', ...vs.map((v) => cell(v, (x) => x.totalCpuUs))]),
    row(['decisions/s answered', ...vs.map((v) => cell(v, (x) => x.okPerSec))]),
    row([
      'latency p50 / p90 / p99 ms',
      ...vs.map((v) => cell(v, (x) => `${x.latencyMs.p50} / ${x.latencyMs.p90} / ${x.latencyMs.p99}`)),
    ]),
    row([
      'records per produce request',
      ...vs.map((v) => (SHIPS.has(v) ? num(s.sides[v].recordsPerRequest) : '–')),
    ]),
    row([
      'records per decision',
      ...vs.map((v) => (SHIPS.has(v) ? num(s.sides[v].recordsPerDecision) : '–')),
    ]),
    row(['failed / cut at the end', ...vs.map((v) => cell(v, (x) => `${x.failed} / ${x.cut}`))]),
  );
  return lines;
}

const mark = (ok) => (ok === null ? '' : ok ? 'met' : 'MISSED');
const rounds = (r) => (r ? `(rounds ${r.rounds.join(' ')})` : '');

export function printSteadySummary(record) {
  const { settings, results, idle, lag } = record;
  const lines = [
    '',
    `steady rate: Tally vs ${record.peer ? 'envoyproxy/ratelimit' : '(no peer: PEER_RATELIMIT_BIN unset)'} — ` +
      `median of ${settings.rounds} alternating rounds of ${settings.durationSeconds} s ` +
      `(+${settings.warmupSeconds} s warmup), concurrency ${settings.concurrency}, Tally workers ${settings.workers}, ` +
      `${settings.cpus} cores, load avg at the end ${record.loadAvg.map((x) => round(x, 2)).join(' ')}`,
  ];
  const target = [];
  for (const [name, loads] of Object.entries(results)) {
    for (const [load, s] of Object.entries(loads)) {
      const title = load === 'fixed' ? `${name} at ${settings.rate}/s:` : `${name} at saturation:`;
      lines.push('', ...loadTable(title, s));
      const r = s.ratios;
      if (r.cpuVsBaseline)
        target.push(
          row([
            `Tally ÷ baseline, ${name} ${load}`,
            `CPU ${r.cpuVsBaseline.median}`,
            `rate ${r.throughputVsBaseline.median}`,
            '',
            `(rounds CPU ${r.cpuVsBaseline.rounds.join(' ')}; rate ${r.throughputVsBaseline.rounds.join(' ')})`,
          ]),
        );
      if (load === 'fixed') {
        target.push(
          row([
            `ledger µs/decision, ${name}`,
            r.ledgerUs.median,
            `≤ ${STEADY_TARGETS.ledgerUs}`,
            mark(r.ledgerUs.median <= STEADY_TARGETS.ledgerUs),
            rounds(r.ledgerUs),
          ]),
        );
        if (r.cpuVsPeer)
          target.push(
            row([
              `Tally ÷ peer CPU/decision, ${name}`,
              r.cpuVsPeer.median,
              `≤ ${STEADY_TARGETS.cpuVsPeer}`,
              mark(r.cpuVsPeer.median <= STEADY_TARGETS.cpuVsPeer),
              rounds(r.cpuVsPeer),
            ]),
          );
      } else if (r.throughputVsPeer) {
        const want = STEADY_TARGETS.saturation[name];
        target.push(
          row([
            `saturation Tally ÷ peer, ${name}`,
            r.throughputVsPeer.median,
            want ? `≥ ${want}` : '',
            want ? mark(r.throughputVsPeer.median >= want) : '',
            rounds(r.throughputVsPeer),
          ]),
        );
        if (r.pausedThroughputVsPeer)
          target.push(
            row([
              `  ledger paused`,
              r.pausedThroughputVsPeer.median,
              '',
              '',
              rounds(r.pausedThroughputVsPeer),
            ]),
          );
      }
    }
  }
  if (idle) {
    const others = Object.entries(idle.cpuMsPerSec)
      .filter(([n]) => n !== 'relay')
      .map(([n, v]) => `${n} ${v}`);
    target.push(
      row([
        'relay idle CPU ms/s',
        num(idle.cpuMsPerSec.relay),
        `≤ ${STEADY_TARGETS.relayIdleMsPerSec}`,
        mark(idle.cpuMsPerSec.relay <= STEADY_TARGETS.relayIdleMsPerSec),
        `(${idle.seconds} s; ${others.join(', ')})`,
      ]),
    );
  }
  if (lag) {
    target.push(
      row([
        `lag p99 ms @ ${lag.rate}/s`,
        lag.p99,
        `≤ ${STEADY_TARGETS.lagP99Ms}`,
        mark(lag.p99 <= STEADY_TARGETS.lagP99Ms && lag.lost === 0),
        `(p50 ${lag.p50}, p90 ${lag.p90}; ${lag.arrived}/${lag.markers} markers, ${lag.lost} lost; ` +
          `background ${lag.backgroundPerSec}/s ${lag.transport})`,
      ]),
    );
  }
  lines.push('', row(['target', 'measured', 'target', '', '']), ...target, '');
  process.stdout.write(lines.join('\n') + '\n');
}
