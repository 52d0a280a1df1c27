import {
  DECISION_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  USAGE_EVENT_TYPE,
  type DecisionEventV1,
  type DecisionEventV2,
  type OverrideEventV1,
  type LedgerEvent,
  type PolicyOutcomeV1,
  type UsageEventV1,
} from '@tally/events';
import type { AuditEntry } from './audit-entry';
import { MAX_AGGREGATE } from './exact-counter';
import { bucketStart, GRANULARITIES } from './granularity';
import type {
  DedupMark,
  FoldContext,
  FoldLimits,
  ProjectionDelta,
  RefusedIndex,
  UsageIncrement,
  UsageTotalIncrement,
} from './projection-delta';
import { dedupTokenOf } from '../sink/projection-keys';
import { roomFor } from './refusal-reasons';
import { eventTimeMs } from './event-time';
import { idTimeMs } from './id-time';

/**
 * Usage of a decision no policy applied to. Policy names match `[a-z0-9]…`, so this cannot collide;
 * it keeps such usage visible instead of letting it vanish from the projections.
 */
export const UNMATCHED_POLICY = '_unmatched';

/**
 * The per-tenant "all policies" aggregate, stored beside the policies in each `usage:` hash. A
 * decision that two policies applied to charges each of them the full cost, so summing the policy
 * fields would count it twice; this field counts every usage event once. Like `_unmatched`, it
 * cannot collide with a policy name.
 */
export const ALL_POLICIES = '_all';

/**
 * Folds validated events into one delta. Usage comes from usage events only (the commercial ledger).
 * The audit trail of a decision comes from its one record: a usage event (degraded, and shadow
 * would-denies of an allowed decision) or a denial (`tally.decision.v2`, or a `tally.decision.v1`
 * denial in older history). A `tally.decision.v1` allowed or degraded event is skipped outright (no
 * effect, no dedup mark, not counted): its usage twin, same id, carries every fact it has, so
 * history of either contract folds to the same projections (docs/adr/0009). Each policy of a usage event is charged the full cost: every one of its windows consumed it;
 * the `ALL_POLICIES` aggregate is charged once per event, whatever the number of policies.
 * Deterministic: the same events in the same order give the same delta (replays are comparable).
 *
 * Exact: no sum passes `MAX_AGGREGATE` (2^53 − 1), below which doubles add integers exactly. Events
 * are taken one at a time, in order; one that would take a cell past it — or past the room
 * `context.limits` leaves where the namespace already holds usage — is refused (`delta.refused`),
 * and the events after it are still taken if they fit.
 */
export function foldEvents(events: Iterable<LedgerEvent>, context: FoldContext = {}): ProjectionDelta {
  const folding = new EventFolding(context);
  for (const event of events) folding.add(event);
  return folding.delta();
}

/**
 * `foldEvents` one event at a time: `cells` tells how much a step would write so far, so a writer
 * can cut steps by their Redis cost rather than by a count of events.
 */
export class EventFolding {
  private readonly seen = new Set<string>();
  // Usage is summed in nested maps (tenant → policy → key → slot) instead of maps keyed by built
  // strings: a batch of thousands of events then builds no id string per event and granularity. The
  // lists keep creation order, so the delta (and the script arguments) stay what they always were.
  private readonly keySlots = new Map<string | null, Map<string, Map<string, KeySlot>>>();
  private readonly totalSlots = new Map<string | null, Map<string, BucketSlot<UsageTotalIncrement>>>();
  private readonly usage: Mutable<UsageIncrement>[] = [];
  private readonly totals: Mutable<UsageTotalIncrement>[] = [];
  private readonly audit: AuditEntry[] = [];
  private readonly versions = new Map<string, number>();
  private readonly dedup: DedupMark[] = [];
  private readonly idDedup: DedupMark[] = [];
  private readonly refused: RefusedIndex[] = [];
  private readonly starts = new BucketStarts();
  private applied = 0;
  private duplicates = 0;
  private added = 0;
  /** Cost of the usage folded so far: while it stays ≤ MAX_AGGREGATE no cell can pass it, unchecked. */
  private costSum = 0;

  constructor(private readonly context: FoldContext = {}) {}

  /**
   * What the step of the delta writes: a field per policy key (cost and count in one), two per
   * policy total, a token per event (two when its id hour is another), a row per audit entry. Redis
   * time of a step grows with it, whatever the event count.
   */
  get cells(): number {
    const marks = this.dedup.length + this.idDedup.length;
    return this.usage.length + 2 * this.totals.length + marks + this.audit.length;
  }

  add(event: LedgerEvent): void {
    const index = this.added++;
    if (supersededByUsage(event)) return;
    const token = dedupTokenOf(event);
    if (this.seen.has(token) || this.context.isApplied?.(token) === true) {
      this.duplicates++;
      return;
    }
    this.seen.add(token);
    if (this.context.isRefused?.(token) === true) return;
    const timeMs = eventTimeMs(event.time);
    const idMs = idHourMark(event.id, timeMs);
    const refusal = this.refusalOf(event, timeMs, idMs);
    if (refusal !== undefined) {
      this.refused.push({ index, reason: refusal });
      return;
    }
    this.dedup.push({ token, timeMs });
    if (idMs !== undefined) this.idDedup.push({ token, timeMs: idMs });
    this.applied++;
    if (event.type === OVERRIDE_EVENT_TYPE) this.addOverride(event, timeMs);
    else if (event.type === USAGE_EVENT_TYPE) this.addUsage(event, timeMs);
    else this.addDenial(event, timeMs);
  }

  delta(): ProjectionDelta {
    const known = this.context.knownPolicySetVersions;
    const fresh = [...this.versions].filter(([version]) => known?.has(version) !== true);
    const reloads = fresh.map(([version, firstSeenMs]): AuditEntry => ({
      id: `policy_reload:${version}`,
      timeMs: firstSeenMs,
      type: 'policy_reload',
      count: 1,
      selectors: {},
      policySetVersion: version,
    }));
    return {
      usage: this.usage,
      usageTotals: this.totals,
      audit: [...this.audit, ...reloads],
      policySetVersions: fresh.map(([version, firstSeenMs]) => ({ version, firstSeenMs })),
      dedup: this.dedup,
      idDedup: this.idDedup,
      applied: this.applied,
      duplicates: this.duplicates,
      refused: this.refused,
    };
  }

  /** Why the event cannot be taken, checked only where it could matter; undefined when it can. */
  private refusalOf(event: LedgerEvent, timeMs: number, idMs: number | undefined): string | undefined {
    const limits = this.context.limits;
    const idDedup = idMs === undefined ? undefined : limits?.dedupRefusal(idMs);
    if (idDedup !== undefined) return idDedup;
    // Denials and override changes: one audit row each, no usage.
    if (event.type !== USAGE_EVENT_TYPE)
      return limits?.dedupRefusal(timeMs) ?? limits?.auditRefusal(tenantOf(event.data));
    // With no limit known and the step's whole cost within MAX_AGGREGATE (every step of a real
    // workload), no cell can pass it: the fold's hot path pays one comparison.
    if (limits === undefined && this.costSum + event.data.cost <= MAX_AGGREGATE) return undefined;
    return this.usageRefusal(event, timeMs, limits);
  }

  /**
   * Why a usage event cannot be added: a cell it charges would pass its room — `MAX_AGGREGATE`
   * minus what the namespace stores there (`limits`, else 0) minus what earlier events of the step
   * put there — or is refused outright. Undefined when every cell takes it.
   */
  private usageRefusal(event: UsageEventV1, timeMs: number, limits?: FoldLimits): string | undefined {
    const dedup = limits?.dedupRefusal(timeMs);
    if (dedup !== undefined) return dedup;
    const tenant = tenantOf(event.data);
    const audit = hasAuditRows(event.data) ? limits?.auditRefusal(tenant) : undefined;
    if (audit !== undefined) return audit;
    const limited = limits?.touches(tenant) === true ? limits : undefined;
    const { cost } = event.data;
    const starts = this.starts.of(timeMs);
    const policies = policiesOf(event.data);
    for (let g = 0; g < GRANULARITIES.length; g++) {
      const granularity = GRANULARITIES[g];
      const start = starts[g];
      for (const policy of [ALL_POLICIES, ...policies.map((p) => p.name)]) {
        const cell = { tenant, policy, granularity, start };
        const used = this.totalSlots.get(tenant)?.get(policy)?.buckets[g].get(start);
        const why = roomFor(cell, limited?.totalRoom(tenant, policy, granularity, start), used, cost);
        if (why !== undefined) return why;
      }
      for (const { name: policy, key } of policies) {
        const cell = { tenant, policy, key, granularity, start };
        const used = this.keySlots.get(tenant)?.get(policy)?.get(key)?.buckets[g].get(start);
        const why = roomFor(cell, limited?.keyRoom(tenant, policy, key, granularity, start), used, cost);
        if (why !== undefined) return why;
      }
    }
    return undefined;
  }

  private addUsage(event: UsageEventV1, timeMs: number): void {
    this.addAudit(event, timeMs);
    const { cost } = event.data;
    this.costSum += cost;
    const tenant = tenantOf(event.data);
    const policies = policiesOf(event.data);
    const starts = this.starts.of(timeMs);
    this.bumpTotals(this.totalSlot(tenant, ALL_POLICIES), starts, cost);
    for (const { name: policy, key } of policies) {
      this.bumpTotals(this.totalSlot(tenant, policy), starts, cost);
      const slot = this.keySlot(tenant, policy, key);
      for (let g = 0; g < GRANULARITIES.length; g++) {
        const start = starts[g];
        const buckets = slot.buckets[g];
        let entry = buckets.get(start);
        if (entry === undefined) {
          entry = {
            tenant,
            policy,
            key,
            granularity: GRANULARITIES[g],
            start,
            cost: 0,
            count: 0,
          };
          buckets.set(start, entry);
          this.usage.push(entry);
        }
        entry.cost += cost;
        entry.count += 1;
      }
    }
  }

  private bumpTotals(slot: BucketSlot<UsageTotalIncrement>, starts: readonly number[], cost: number): void {
    for (let g = 0; g < GRANULARITIES.length; g++) {
      const start = starts[g];
      const buckets = slot.buckets[g];
      let entry = buckets.get(start);
      if (entry === undefined) {
        const granularity = GRANULARITIES[g];
        entry = { tenant: slot.tenant, policy: slot.policy, granularity, start, cost: 0, count: 0 };
        buckets.set(start, entry);
        this.totals.push(entry);
      }
      entry.cost += cost;
      entry.count += 1;
    }
  }

  private totalSlot(tenant: string | null, policy: string): BucketSlot<UsageTotalIncrement> {
    let byPolicy = this.totalSlots.get(tenant);
    if (byPolicy === undefined)
      this.totalSlots.set(tenant, (byPolicy = new Map<string, BucketSlot<UsageTotalIncrement>>()));
    let slot = byPolicy.get(policy);
    if (slot === undefined) byPolicy.set(policy, (slot = { tenant, policy, buckets: bucketMaps() }));
    return slot;
  }

  private keySlot(tenant: string | null, policy: string, key: string): KeySlot {
    let byPolicy = this.keySlots.get(tenant);
    if (byPolicy === undefined)
      this.keySlots.set(tenant, (byPolicy = new Map<string, Map<string, KeySlot>>()));
    let byKey = byPolicy.get(policy);
    if (byKey === undefined) byPolicy.set(policy, (byKey = new Map<string, KeySlot>()));
    let slot = byKey.get(key);
    if (slot === undefined) byKey.set(key, (slot = { tenant, policy, buckets: bucketMaps() }));
    return slot;
  }

  /** Every override change is one audit row: who changed which limits, from what to what, and why. */
  private addOverride(event: OverrideEventV1, timeMs: number): void {
    const { data } = event;
    this.audit.push({
      id: event.id,
      timeMs,
      type: 'override',
      ...(typeof data.tenant === 'string' ? { tenant: data.tenant } : {}),
      policy: data.policy,
      reason: data.reason,
      count: 1,
      selectors: {},
      policySetVersion: '',
      change: {
        action: data.action,
        key: data.key,
        version: data.version,
        set_by: data.set_by,
        ...(data.before === undefined ? {} : { before: data.before }),
        ...(data.after === undefined ? {} : { after: data.after }),
      },
    });
  }

  /** A denial: `tally.decision.v2`, or a `tally.decision.v1` denial of older history (the same fields). */
  private addDenial(event: DecisionEventV1 | DecisionEventV2, timeMs: number): void {
    this.addAudit(event, timeMs);
  }

  /**
   * The audit rows of a decision's one record, and its policy-set version. A row holds only what
   * the usage event and the `tally.decision.v1` twin of an allowed or degraded decision share (`count`
   * is 1 for both), so it is the same member whichever contract wrote the history.
   */
  private addAudit(event: UsageEventV1 | DecisionEventV1 | DecisionEventV2, timeMs: number): void {
    const { data } = event;
    const version = data.policy_set_version;
    const firstSeen = this.versions.get(version);
    if (firstSeen === undefined || timeMs < firstSeen) this.versions.set(version, timeMs);
    // Most decisions are allowed and were counted by every policy: nothing for the audit trail.
    if (!hasAuditRows(data)) return;

    const row = {
      id: event.id,
      timeMs,
      ...(typeof data.tenant === 'string' ? { tenant: data.tenant } : {}),
      count: 'count' in data ? data.count : 1,
      selectors: data.selectors,
      policySetVersion: version,
    };
    const withPolicy = (policy: string | undefined) => (policy === undefined ? {} : { policy });
    if (data.outcome === 'denied') {
      const policy =
        data.policies.find((p) => p.mode === 'enforce' && exhausted(p) !== undefined) ?? data.policies[0];
      this.audit.push({ ...row, type: 'denied', ...withPolicy(policy?.name), ...reasonOf(data.reason) });
    }
    if (data.outcome === 'degraded') {
      const policy = data.policies[0];
      this.audit.push({
        ...row,
        type: 'degraded',
        ...withPolicy(policy?.name),
        ...reasonOf(data.degraded_cause),
      });
    }
    for (const policy of data.policies) {
      const window = policy.mode === 'shadow' ? exhausted(policy) : undefined;
      if (window === undefined) continue;
      const reason = window.role === 'burst' ? 'burst_quota_exhausted' : 'sustained_quota_exhausted';
      this.audit.push({ ...row, type: 'would_deny', policy: policy.name, reason });
    }
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One (tenant, policy) aggregate: a bucket map per granularity, indexed like `GRANULARITIES`. */
interface BucketSlot<T> {
  readonly tenant: string | null;
  readonly policy: string;
  readonly buckets: Map<number, Mutable<T>>[];
}

type KeySlot = BucketSlot<UsageIncrement>;

const UNMATCHED: readonly { name: string; key: string }[] = [{ name: UNMATCHED_POLICY, key: '' }];

/** Consumers accept null for absent optional fields (class-validator's @IsOptional does). */
function tenantOf(data: { readonly tenant?: string | null }): string | null {
  return typeof data.tenant === 'string' ? data.tenant : null;
}

function policiesOf(data: UsageEventV1['data']): readonly { name: string; key: string }[] {
  return data.policies.length > 0 ? data.policies : UNMATCHED;
}

/**
 * A `tally.decision.v1` record of an allowed or degraded decision: relays of the first contract
 * published it beside the usage event of the same decision (same id, same facts), which folds it.
 */
function supersededByUsage(event: LedgerEvent): boolean {
  return event.type === DECISION_EVENT_TYPE && event.data.outcome !== 'denied';
}

/** Whether a decision's record makes audit rows: a denial, a degraded decision, a shadow would-deny. */
function hasAuditRows(data: { readonly outcome: string; readonly policies: readonly PolicyOutcomeV1[] }) {
  return data.outcome !== 'allowed' || data.policies.some(wouldDenyInShadow);
}

const HOUR_MS = 3_600_000;

/**
 * The id time of an event when its hour is not the event's hour (its second dedup mark), else
 * undefined. Copies of one decision share the id but not always the time: a step that timed out at
 * the API yet committed is in the outbox `allowed` at Redis time and `degraded` at the API's clock,
 * which may fall in another hour (a decision at hh:59:59.95, a paused Redis, a skewed replica). Marked
 * in their common id hour too, the second copy to arrive always meets the first. Events whose id
 * and time share an hour (nearly all) pay one comparison and no extra cell.
 */
function idHourMark(id: string, timeMs: number): number | undefined {
  const idMs = idTimeMs(id);
  return idMs === undefined || Math.floor(idMs / HOUR_MS) === Math.floor(timeMs / HOUR_MS) ? undefined : idMs;
}

function bucketMaps<T>(): Map<number, T>[] {
  return GRANULARITIES.map(() => new Map<number, T>());
}

/**
 * The bucket starts of every granularity for an instant, remembered per minute: the events of a
 * batch mostly share a few minutes, and the month start (a Date per call) is the costly one.
 */
class BucketStarts {
  private minute = Number.NaN;
  private starts: readonly number[] = [];

  of(timeMs: number): readonly number[] {
    const minute = bucketStart(timeMs, 'minute');
    if (minute !== this.minute) {
      this.minute = minute;
      this.starts = GRANULARITIES.map((granularity) => bucketStart(timeMs, granularity));
    }
    return this.starts;
  }
}

function wouldDenyInShadow(policy: PolicyOutcomeV1): boolean {
  return policy.mode === 'shadow' && exhausted(policy) !== undefined;
}

function exhausted(policy: PolicyOutcomeV1) {
  return policy.windows.find((window) => window.would_deny === true);
}

function reasonOf(reason: string | undefined): { reason?: string } {
  return typeof reason === 'string' ? { reason } : {};
}
