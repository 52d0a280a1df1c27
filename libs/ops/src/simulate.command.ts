import { OVERRIDE_EVENT_TYPE, parseDecisionEvent } from '@tally/events';
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
  /** Defaults to `tally.decision.v1`. */
  readonly topic?: string;
  readonly onProgress?: ProgressListener;
}

export interface SimulateResult extends SimulationReport {
  readonly policySetVersion: string;
  readonly from: string;
  readonly to: string;
  /** Records read from the topic (in and around the range). */
  readonly recordsRead: number;
  /** Records that were not valid decision events (left out, counted here). */
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
  const topic = options.topic ?? TOPICS.decision;
  const ranges = await planTopicRange(
    ledger.admin,
    topic,
    options.fromMs,
    options.toMs,
    options.lateMs ?? 300_000,
  );
  const meter = new ProgressMeter(rangeSize(ranges));
  const progress = throttled(options.onProgress);
  const decisions: RecordedDecision[] = [];
  let invalid = 0;
  const read = await readTopicRanges(
    ledger.consumers,
    ranges,
    (_topic, _partition, records) => {
      for (const record of records) {
        if (record.value === null) continue;
        const parsed = parseDecisionEvent(record.value);
        // The topic also carries override changes: not decisions, and not invalid either.
        if (!parsed.ok && isOverrideChange(record.value)) continue;
        if (!parsed.ok) {
          invalid++;
          continue;
        }
        const decision = recordedDecision(parsed.event);
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

/** A record of the decision topic that is an override change (its type attribute, nothing parsed). */
function isOverrideChange(value: Buffer): boolean {
  return value.includes(`"type":"${OVERRIDE_EVENT_TYPE}"`);
}
