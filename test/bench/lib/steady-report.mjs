// The steady bench's table: per case and load one column per variant, then each target's ratio
// against its target (the issue's), met or MISSED.
import { round } from './load.mjs';
import { ROLES, STEADY_TARGETS, VARIANTS } from './steady-summary.mjs';

const num = (x) =>
  x === null || x === undefined ? 'n/a' : x >= 1000 ? Math.round(x).toLocaleString('en') : x;
const row = (cells) => cells.map((c, i) => String(c).padEnd(i === 0 ? 36 : 27)).join('');
const HEAD = {
  tally: 'Tally',
  paused: 'ledger paused',
  baseline: 'baseline build',
  floor: "floor (peer's work)",
  contract: "contract's floor",
  peer: 'peer',
};
/** The variants whose relay ships while measured (its /metrics read around the measurement). */
const SHIPS = new Set(['tally', 'baseline', 'contract']);
const LABEL = { server: 'decision-api / floor / ratelimit', projector: 'projector' };

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
    if (role === 'kafka broker')
      lines.push(
        row([
          '    without its compiler threads',
          ...vs.map((v) => cell(v, (x) => x.broker?.withoutCompilerUs)),
        ]),
        row([
          '    compiler threads (JIT), ms/s',
          ...vs.map((v) => cell(v, (x) => x.broker?.compilerMsPerSec)),
        ]),
      );
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

/**
 * The ledger's two figures against its target: Tally's total less the ledger-paused total, and the
 * ledger's own processes (relay + broker without its JIT compiler threads + Redis, the last two
 * above the paused measurement), with the broker's JIT counted beside it.
 */
function ledgerRows(name, r) {
  const want = STEADY_TARGETS.ledgerUs;
  const figure = (label, f, note = '') =>
    f.median === null
      ? row([label, 'n/a', `≤ ${want}`, '', '(no ledger-paused variant: BENCH_STEADY_PAUSED=0)'])
      : row([label, f.median, `≤ ${want}`, mark(f.median <= want), `${rounds(f)}${note}`]);
  return [
    figure(`ledger µs/decision, ${name}: totals`, r.ledgerTotalsUs, ' Tally − ledger paused, all processes'),
    figure(
      `  own processes, broker w/o JIT`,
      r.ledgerOwnUs,
      ` relay + broker + Redis above paused; with the broker's JIT ${r.ledgerOwnWithJitUs.median}`,
    ),
  ];
}

/**
 * Where Tally ÷ peer comes from, within the same rounds: the ledger paused against the peer, the
 * floor (the peer's work on Tally's stack) against the peer, Tally against the floor, and the
 * contract's floor (the floor's server with the API's atomic step and the ledger) against the peer.
 */
function platformRows(r) {
  const line = (label, f) => (f ? [row([label, f.median, '', '', rounds(f)])] : []);
  return [
    ...line('  ledger paused ÷ peer', r.pausedCpuVsPeer),
    ...line("  floor (peer's work) ÷ peer", r.floorCpuVsPeer),
    ...line('  Tally ÷ floor', r.cpuVsFloor),
    ...line('  ledger paused ÷ floor', r.pausedCpuVsFloor),
    ...line('  Tally above the floor, µs', r.aboveFloorUs),
    ...line(`  its budget (${STEADY_TARGETS.cpuVsPeer} × peer − floor)`, r.budgetAboveFloorUs),
    ...line("  contract's floor ÷ peer", r.contractCpuVsPeer),
    ...line("  Tally ÷ contract's floor", r.cpuVsContract),
  ];
}

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
        target.push(...ledgerRows(name, r));
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
        target.push(...platformRows(r));
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
        if (r.floorThroughputVsPeer)
          target.push(
            row([
              `  floor (peer's work)`,
              r.floorThroughputVsPeer.median,
              '',
              '',
              rounds(r.floorThroughputVsPeer),
            ]),
          );
        if (r.contractThroughputVsPeer)
          target.push(
            row([
              `  contract's floor`,
              r.contractThroughputVsPeer.median,
              '',
              '',
              rounds(r.contractThroughputVsPeer),
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
        `(${idle.seconds} s, ${idle.settleSeconds ?? 0} s after the drain; ${others.join(', ')})`,
      ]),
    );
  }
  if (lag) {
    const asked = `${lag.rate}/s asked (½ of ${lag.maxRate}/s, the full pipeline's saturation), ${lag.background.okPerSec}/s answered`;
    target.push(
      row(
        lag.overloaded
          ? [`lag p99 ms`, 'overloaded', `≤ ${STEADY_TARGETS.lagP99Ms}`, '–', `(${asked}: no lag figure)`]
          : [
              `lag p99 ms @ ${lag.rate}/s`,
              lag.p99,
              `≤ ${STEADY_TARGETS.lagP99Ms}`,
              mark(lag.p99 <= STEADY_TARGETS.lagP99Ms && lag.lost === 0),
              `(p50 ${lag.p50}, p90 ${lag.p90}; ${lag.arrived}/${lag.markers} markers, ${lag.lost} lost; ` +
                `${asked}, ${lag.transport})`,
            ],
      ),
    );
    const b = lag.background;
    const cpu = Object.entries(b.cpuUs).map(([role, us]) => `${LABEL[role] ?? role} ${us}`);
    lines.push(
      '',
      `lag phase, ${lag.transport} at ${lag.rate}/s asked, ${b.okPerSec}/s answered, projector running: ` +
        `CPU µs per decision ${cpu.join(', ')} = ${b.totalCpuUs}; records per produce request ` +
        `${num(b.relay.recordsPerRequest)}, per decision ${num(b.relay.perDecision)}` +
        // Answered at the rate asked on a machine with no idle core is still a loaded machine's lag.
        (b.machine ? `; machine ms/s: other ${b.machine.otherMsPerSec}, idle ${b.machine.idleMsPerSec}` : ''),
    );
  }
  lines.push('', row(['target', 'measured', 'target', '', '']), ...target, '');
  process.stdout.write(lines.join('\n') + '\n');
}
