// The replay bench's summary: per round and median, replay vs the bare read of the same ranges
// (the Kafka read ceiling of this run), and the target of issue 5 item 8.
import { round } from './load.mjs';

export const REPLAY_TARGETS = { replayEventsPerSec: 100_000 };

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** One round's figures folded into the rows printed and stored. */
export function roundFigures(baseline, replayed) {
  return {
    replayEventsPerSec: replayed.eventsPerSec,
    baselineEventsPerSec: baseline.eventsPerSec,
    ratio: round(replayed.eventsPerSec / baseline.eventsPerSec, 3),
    replaySteadyPerSec: replayed.steadyPerSec,
    baselineSteadyPerSec: baseline.steadyPerSec,
    steadyRatio: round(replayed.steadyPerSec / baseline.steadyPerSec, 3),
  };
}

export function medianFigures(perRound) {
  return Object.fromEntries(
    Object.keys(perRound[0]).map((k) => [k, round(median(perRound.map((r) => r[k])), 3)]),
  );
}

export function printReplaySummary(settings, events, perRound, med, met) {
  const row = (cells) => cells.map((c, i) => String(c).padEnd(i === 0 ? 14 : 16)).join('');
  const line = (label, r) =>
    row([
      label,
      Math.round(r.replayEventsPerSec),
      Math.round(r.baselineEventsPerSec),
      r.ratio,
      Math.round(r.replaySteadyPerSec),
      Math.round(r.baselineSteadyPerSec),
      r.steadyRatio,
    ]);
  const lines = [
    '',
    `replay, ${settings.decisions} decisions (${events} events) of ${settings.tenants} tenants, ` +
      `${settings.partitions} partitions × 2 topics, concurrency ${settings.concurrency}, ` +
      `${settings.rounds} rounds, ${settings.cpus} cores, private Redis + Kafka`,
    row(['round', 'replay ev/s', 'bare read ev/s', 'ratio', 'replay steady', 'read steady', 'steady ratio']),
    ...perRound.map((r, i) => line(String(i + 1), r)),
    line('median', med),
    '',
    `target: replay ≥ ${REPLAY_TARGETS.replayEventsPerSec} events/s (median, whole command): ` +
      `${Math.round(med.replayEventsPerSec)} ${met.replayEventsPerSec ? 'met' : 'MISSED'}`,
    'ev/s = records / wall time of the whole call (planning, group join, read, last step, disconnect);',
    'steady = records after the first batch / time from the first batch to the end (no group join).',
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
