import type { Ledger } from '@tally/ledger';
import { expect } from 'vitest';
import type { AppProcess } from './ledger-apps.harness';
import type { ClientRecord } from './ledger-client.record';
import type { DrainProbe } from './ledger-drain.probe';
import { compare, projectedTotals, readUsage, type InvariantReport } from './ledger-invariant.check';
import { Workload } from './ledger-workload.generator';

/** What a fault suite around the ledger invariant runs on: its apps, its stack, its numbers. */
export interface ScenarioContext {
  /** Prefix of the suite's tenants and the tag of its printed lines. */
  readonly run: string;
  readonly label: string;
  readonly api: () => AppProcess;
  readonly projector: () => AppProcess | undefined;
  readonly probe: () => DrainProbe;
  readonly ledger: () => Ledger;
  readonly token: string;
  readonly rate: number;
  readonly minDecisions: number;
  /** Every printed line, for the suite's summary. */
  readonly summary: Record<string, unknown>[];
}

export interface ScenarioResult {
  readonly line: Record<string, unknown>;
  readonly record: ClientRecord;
  readonly report: InvariantReport;
}

/**
 * Runs the workload around `fault`, drains, and checks the ledger invariant exactly: every answer
 * without a 5xx or a degraded one, allowed decisions = distinct usage events in Kafka = projected
 * usage, per tenant. Returns the printed numbers for the suite's own further checks.
 */
export async function runLedgerScenario(
  ctx: ScenarioContext,
  name: string,
  seed: number,
  fault: (load: Workload) => Promise<Record<string, number>>,
): Promise<ScenarioResult> {
  const tenants = [0, 1, 2, 3].map((i) => `${ctx.run}-${name}-t${i}`);
  const load = new Workload({ baseUrl: ctx.api().baseUrl, token: ctx.token, tenants, seed, rate: ctx.rate });
  let faultNumbers: Record<string, number>;
  try {
    faultNumbers = await fault(load);
    await load.reached(ctx.minDecisions);
  } finally {
    // A failed fault must not leave requests running into the next scenario (or the next file).
    await load.stop();
  }
  const { record } = load;
  const drainMs = await ctx.probe().drained(90_000);
  const kafka = await readUsage(ctx.ledger(), new Set(tenants));
  const projector = ctx.projector();
  if (projector === undefined) throw new Error('no projector running');
  const report = compare(record, kafka, await projectedTotals(projector.baseUrl, ctx.token, tenants));

  const line = {
    scenario: name,
    seed,
    ...record.counts,
    usageEvents: report.kafkaEvents,
    usageIds: report.kafkaIds,
    duplicates: report.duplicates,
    projectedCost: Object.values(report.projected).reduce((a, t) => a + t.cost, 0),
    projectedCount: Object.values(report.projected).reduce((a, t) => a + t.count, 0),
    clientCost: Object.values(report.client).reduce((a, t) => a + t.cost, 0),
    drainMs,
    ...faultNumbers,
  };
  ctx.summary.push(line);
  console.log(`[${ctx.label}] ${JSON.stringify(line)}`);

  // No 5xx, no degraded answer: the decision path never waits on Kafka.
  expect(record.anomalies).toEqual([]);
  expect(kafka.violations).toEqual([]);
  expect(report.missing).toEqual([]);
  expect(report.unexpected).toEqual([]);
  expect(report.divergent).toEqual([]);
  expect(report.kafkaIds).toBe(report.clientIds);
  expect(report.projected).toEqual(report.client);
  // A workload that exercised nothing would make the equalities above vacuous.
  expect(record.counts.decisions).toBeGreaterThanOrEqual(ctx.minDecisions);
  expect(record.counts.allowedWithCost).toBeGreaterThan(500);
  return { line, record, report };
}
