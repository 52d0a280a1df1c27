// The steady bench's figures: per case (grpc-1, http) and load (a fixed rate, saturation) the median
// over the rounds of each variant (Tally, Tally with the ledger paused, a baseline build, the floor:
// the peer's work on Tally's stack, the contract's floor: the floor's server making the API's atomic
// step with the ledger shipping it, the peer),
// and the ratios the targets are set in (each taken within a round, whose variants ran back to back,
// then its median), the ledger's CPU per decision among them.
import { round } from './load.mjs';
import { median } from './report.mjs';

export const VARIANTS = ['tally', 'paused', 'baseline', 'floor', 'contract', 'peer'];
/** What the targets ask of a build (µs, ratios, ms per second, ms). */
export const STEADY_TARGETS = {
  ledgerUs: 50,
  relayIdleMsPerSec: 3,
  cpuVsPeer: 1.5,
  saturation: { 'grpc-1': 0.6, http: 0.8 },
  lagP99Ms: 250,
};

export const ROLES = ['server', 'redis-server', 'relay', 'kafka broker', 'projector'];

/**
 * The ledger's CPU per decision in one round, two ways, each null without a ledger-paused variant:
 * - `totals`: Tally's total less the same build's total with the ledger paused: all the ledger
 *   changes, with the API's spread between two measurements of one build and the broker's JIT in it;
 * - `own`: the ledger's own processes: the relay, the broker's CPU without its JIT compiler threads
 *   above the paused measurement's, Redis above the paused measurement's (a difference below zero,
 *   noise, is kept: a median over rounds of clipped differences would lean high);
 * - `ownWithJit`: `own` with the broker's compiler threads counted on both sides.
 */
function ledgerUs(round_) {
  const on = round_.tally;
  const off = round_.paused;
  if (!off) return { totals: null, own: null, ownWithJit: null };
  const above = (f) => f(on) - f(off);
  const relayAndRedis = (on.cpuUs.relay ?? 0) + above((m) => m.cpuUs['redis-server']);
  const totals = above((m) => m.totalCpuUs);
  return {
    totals: round(totals, 1),
    own: round(relayAndRedis + above((m) => m.broker.withoutCompilerUs), 1),
    ownWithJit: round(relayAndRedis + above((m) => m.cpuUs['kafka broker']), 1),
  };
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
    // The broker's JIT compiler threads (in its `cpuUs` figure) and the rest of its CPU, apart.
    broker: ms[0].broker
      ? {
          withoutCompilerUs: at((m) => m.broker.withoutCompilerUs),
          compilerUs: at((m) => m.broker.compilerUs),
          compilerMsPerSec: at((m) => m.broker.compilerMsPerSec),
        }
      : null,
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
  const ledger = rounds.map(ledgerUs);
  const ratios = {
    ledgerTotalsUs: per((_, i) => ledger[i].totals),
    ledgerOwnUs: per((_, i) => ledger[i].own),
    ledgerOwnWithJitUs: per((_, i) => ledger[i].ownWithJit),
  };
  if (sides.peer) {
    ratios.cpuVsPeer = per((r) => round(r.tally.totalCpuUs / r.peer.totalCpuUs, 2));
    ratios.throughputVsPeer = per((r) => round(r.tally.okPerSec / r.peer.okPerSec, 2));
    if (sides.paused)
      ratios.pausedThroughputVsPeer = per((r) => round(r.paused.okPerSec / r.peer.okPerSec, 2));
  }
  // What the platform costs (the floor against the peer) and what Tally adds to it (with and
  // without its ledger).
  if (sides.peer && sides.paused)
    ratios.pausedCpuVsPeer = per((r) => round(r.paused.totalCpuUs / r.peer.totalCpuUs, 2));
  if (sides.floor && sides.peer) {
    ratios.floorCpuVsPeer = per((r) => round(r.floor.totalCpuUs / r.peer.totalCpuUs, 2));
    ratios.floorThroughputVsPeer = per((r) => round(r.floor.okPerSec / r.peer.okPerSec, 2));
    // The target as a budget: what Tally may add above the floor (the peer's work on its own stack)
    // and stay within cpuVsPeer of the peer, against what it adds.
    ratios.budgetAboveFloorUs = per((r) =>
      round(STEADY_TARGETS.cpuVsPeer * r.peer.totalCpuUs - r.floor.totalCpuUs, 1),
    );
    ratios.aboveFloorUs = per((r) => round(r.tally.totalCpuUs - r.floor.totalCpuUs, 1));
  }
  if (sides.floor) {
    ratios.cpuVsFloor = per((r) => round(r.tally.totalCpuUs / r.floor.totalCpuUs, 2));
    if (sides.paused)
      ratios.pausedCpuVsFloor = per((r) => round(r.paused.totalCpuUs / r.floor.totalCpuUs, 2));
  }
  // The contract's floor: the least a decision that keeps the contract's atomic step (decide.lua, its
  // outbox entry) and ledger costs on this stack, the API's own work left out.
  if (sides.contract && sides.peer) {
    ratios.contractCpuVsPeer = per((r) => round(r.contract.totalCpuUs / r.peer.totalCpuUs, 2));
    ratios.contractThroughputVsPeer = per((r) => round(r.contract.okPerSec / r.peer.okPerSec, 2));
  }
  if (sides.contract) ratios.cpuVsContract = per((r) => round(r.tally.totalCpuUs / r.contract.totalCpuUs, 2));
  if (sides.baseline) {
    ratios.cpuVsBaseline = per((r) => round(r.tally.totalCpuUs / r.baseline.totalCpuUs, 2));
    ratios.throughputVsBaseline = per((r) => round(r.tally.okPerSec / r.baseline.okPerSec, 2));
  }
  return { sides, ratios };
}
