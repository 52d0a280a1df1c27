import type { DecisionEventV1, DecisionEventV2, DecisionOutcome, UsageEventV1 } from '@tally/events';

/**
 * What `tally simulate` needs of one decision's record: its usage event (allowed or degraded), or
 * its denial (`tally.decision.v2`, or a `tally.decision.v1` of older history).
 */
export interface RecordedDecision {
  readonly id: string;
  readonly timeMs: number;
  /** Normalized selectors as the engine saw them (token already an HMAC). */
  readonly selectors: Readonly<Record<string, string>>;
  readonly attributes: Readonly<Record<string, string>>;
  readonly cost: number;
  /** 1, or the number of identical denials coalesced into this event. */
  readonly count: number;
  readonly outcome: DecisionOutcome;
  readonly reason?: string;
  /** The policies that applied then, with what each window said. */
  readonly policies: readonly RecordedPolicy[];
}

export interface RecordedPolicy {
  readonly name: string;
  readonly mode: 'enforce' | 'shadow';
  /** Per window: true = it could not afford the cost; undefined = not recorded. */
  readonly wouldDeny: readonly (boolean | undefined)[];
}

export function recordedDecision(event: UsageEventV1 | DecisionEventV1 | DecisionEventV2): RecordedDecision {
  const { data } = event;
  return {
    id: event.id,
    timeMs: Date.parse(event.time),
    selectors: data.selectors,
    attributes: data.attributes,
    cost: data.cost,
    count: 'count' in data ? data.count : 1,
    outcome: data.outcome,
    ...('reason' in data && typeof data.reason === 'string' ? { reason: data.reason } : {}),
    policies: data.policies.map((p) => ({
      name: p.name,
      mode: p.mode,
      wouldDeny: p.windows.map((w) => (typeof w.would_deny === 'boolean' ? w.would_deny : undefined)),
    })),
  };
}

/** Event time order, ties broken by id: the order the simulation evaluates in, whatever the partitions. */
export function byTimeThenId(a: RecordedDecision, b: RecordedDecision): number {
  return a.timeMs - b.timeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
