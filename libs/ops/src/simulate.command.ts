import {
  DECISION_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  parseLedgerEvent,
  USAGE_EVENT_TYPE,
  type LedgerEvent,
} from '@tally/events';
import { TOPICS, type Ledger } from '@tally/ledger';
import type { PolicySet } from '@tally/policy';
import { loadPolicySet } from './policy-check';
import { PolicySimulator, type SimulationReport } from './policy-simulator';
import { loadProposedOverrides } from './proposed-overrides';
import { ProgressMeter, throttled, type ProgressListener } from './progress';
import { byTimeThenId, recordedDecision, type RecordedDecision } from './recorded-decision';
import { planTopicRange, rangeSize, readTopicRanges } from './topic-range';

export interface SimulateOptions {
  /** The proposed policy file (the CLI). */
  readonly policiesFile?: string;
  /** Or the proposed set already compiled (the projector's `POST /v1/policies:simulate`). */
  readonly policySet?: PolicySet;
  /** Event time range [from, to), epoch ms. */
  readonly fromMs: number;
  readonly toMs: number;
  /** Only decisions of this tenant. */
  readonly tenant?: string;
  /** A file of proposed runtime overrides (`loadProposedOverrides`). */
  readonly overridesFile?: string;
  /** How late after `to` an event of the range may have been published (default 5 min). */
  readonly lateMs?: number;
  /**
   * Defaults to the ledger topics: every decision is its usage record (allowed, degraded) or its
   * denial (`tally.decision.v2`; `tally.decision.v1` in older history, whose allowed and degraded
   * records repeat their usage twins and are skipped).
   */
  readonly topics?: { readonly usage: string; readonly decision: string; readonly decisionV1?: string };
  readonly onProgress?: ProgressListener;
}

export interface SimulateResult extends SimulationReport {
  readonly policySetVersion: string;
  readonly from: string;
  readonly to: string;
  /** Records read from the topic (in and around the range). */
  readonly recordsRead: number;
  /** Records that were not valid events of their topic (left out, counted here). */
  readonly invalid: number;
}

/**
 * `tally simulate`: the recorded decisions of a time range re-evaluated under proposed policies
 * (see PolicySimulator). The decisions are gathered first and sorted by event time, because the
 * partitions interleave and window state depends on order; memory grows with the range.
 */
export async function simulate(
  ledger: Pick<Ledger, 'admin' | 'consumers'>,
  options: SimulateOptions,
): Promise<SimulateResult> {
  const proposed = options.policySet ?? (await loadPolicySet(options.policiesFile ?? ''));
  const overrides =
    options.overridesFile === undefined ? [] : await loadProposedOverrides(options.overridesFile);
  const topics = options.topics ?? {
    usage: TOPICS.usage,
    decision: TOPICS.decision,
    decisionV1: TOPICS.decisionV1,
  };
  const ranges = (
    await Promise.all(
      [topics.usage, topics.decision, ...(topics.decisionV1 === undefined ? [] : [topics.decisionV1])].map(
        (topic) =>
          planTopicRange(ledger.admin, topic, options.fromMs, options.toMs, options.lateMs ?? 300_000),
      ),
    )
  ).flat();
  const meter = new ProgressMeter(rangeSize(ranges));
  const progress = throttled(options.onProgress);
  const decisions: RecordedDecision[] = [];
  // A relay's re-publication repeats an id: each decision is simulated once.
  const seen = new Set<string>();
  let invalid = 0;
  const read = await readTopicRanges(
    ledger.consumers,
    ranges,
    (topic, _partition, records) => {
      for (const record of records) {
        if (record.value === null) continue;
        const parsed = parseLedgerEvent(record.value);
        if (!parsed.ok || !belongsOn(parsed.event, topic, topics.usage)) {
          invalid++;
          continue;
        }
        const event = parsed.event;
        // Override changes are no decisions; a v1 allowed or degraded record is its usage twin's copy.
        if (event.type === OVERRIDE_EVENT_TYPE) continue;
        if (event.type === DECISION_EVENT_TYPE && event.data.outcome !== 'denied') continue;
        const token = `${event.type === USAGE_EVENT_TYPE ? 'u' : 'd'}:${event.id}`;
        if (seen.has(token)) continue;
        seen.add(token);
        const decision = recordedDecision(event);
        if (decision.timeMs < options.fromMs || decision.timeMs >= options.toMs) continue;
        if (options.tenant !== undefined && decision.selectors.tenant !== options.tenant) continue;
        decisions.push(decision);
      }
    },
    { purpose: 'simulate', onProgress: (n) => progress.report(() => meter.snapshot(n)) },
  );
  progress.final(meter.snapshot(read));
  decisions.sort(byTimeThenId);
  const simulator = new PolicySimulator(proposed, overrides);
  for (const decision of decisions) simulator.add(decision);
  return {
    policySetVersion: proposed.version,
    from: new Date(options.fromMs).toISOString(),
    to: new Date(options.toMs).toISOString(),
    recordsRead: read,
    invalid,
    ...simulator.report(),
  };
}

/** Usage records on the usage topic, every other kind on a decision topic. */
function belongsOn(event: LedgerEvent, topic: string, usageTopic: string): boolean {
  return (event.type === USAGE_EVENT_TYPE) === (topic === usageTopic);
}
