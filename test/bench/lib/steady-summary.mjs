// The steady bench's figures: per case (grpc-1, http) and load (a fixed rate, saturation) the median
// over the rounds of each variant (Tally, Tally with the ledger paused, a baseline build, the peer),
// and the ratios the targets are set in (each taken within a round, whose variants ran back to back,
// then its median).
import { round } from './load.mjs';
import { median } from './report.mjs';

export const VARIANTS = ['tally', 'paused', 'baseline', 'peer'];
export const ROLES = ['server', 'redis-server', 'relay', 'kafka broker', 'projector'];

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
