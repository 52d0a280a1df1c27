import {
  DECISION_EVENT_TYPE,
  type DecisionEventV1,
  type LedgerEvent,
  type PolicyOutcomeV1,
  type UsageEventV1,
} from '@tally/events';
import type { AuditEntry } from './audit-entry';
import { bucketStart, GRANULARITIES } from './granularity';
import type {
  DedupMark,
  FoldContext,
  ProjectionDelta,
  TopKeyIncrement,
  UsageIncrement,
  UsageTotalIncrement,
} from './projection-delta';
import { dedupTokenOf } from './projection-keys';

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
 * Folds validated events into one delta. Usage comes from usage events only (the commercial ledger),
 * the audit trail from decision events only, so a decision counted by both topics is never counted
 * twice. Each policy of a usage event is charged the full cost: every one of its windows consumed it;
 * the `ALL_POLICIES` aggregate is charged once per event, whatever the number of policies.
 * Deterministic: the same events in the same order give the same delta (replays are comparable).
 */
export function foldEvents(events: Iterable<LedgerEvent>, context: FoldContext = {}): ProjectionDelta {
  const folding = new Folding(context);
  for (const event of events) folding.add(event);
  return folding.delta();
}

class Folding {
  private readonly seen = new Set<string>();
  private readonly usage = new Map<string, Mutable<UsageIncrement>>();
  private readonly totals = new Map<string, Mutable<UsageTotalIncrement>>();
  private readonly top = new Map<string, Mutable<TopKeyIncrement>>();
  private readonly audit: AuditEntry[] = [];
  private readonly versions = new Map<string, number>();
  private readonly dedup: DedupMark[] = [];
  private applied = 0;
  private duplicates = 0;

  constructor(private readonly context: FoldContext) {}

  add(event: LedgerEvent): void {
    const token = dedupTokenOf(event);
    if (this.seen.has(token) || this.context.isApplied?.(token) === true) {
      this.duplicates++;
      return;
    }
    this.seen.add(token);
    const timeMs = eventTimeMs(event.time);
    this.dedup.push({ token, timeMs });
    this.applied++;
    if (event.type === DECISION_EVENT_TYPE) this.addDecision(event, timeMs);
    else this.addUsage(event, timeMs);
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
      usage: [...this.usage.values()],
      usageTotals: [...this.totals.values()],
      topKeys: [...this.top.values()],
      audit: [...this.audit, ...reloads],
      policySetVersions: fresh.map(([version, firstSeenMs]) => ({ version, firstSeenMs })),
      dedup: this.dedup,
      applied: this.applied,
      duplicates: this.duplicates,
    };
  }

  private addUsage(event: UsageEventV1, timeMs: number): void {
    const { cost } = event.data;
    // Consumers accept null for absent optional fields (class-validator's @IsOptional does).
    const tenant = typeof event.data.tenant === 'string' ? event.data.tenant : null;
    const policies =
      event.data.policies.length > 0 ? event.data.policies : [{ name: UNMATCHED_POLICY, key: '' }];
    const allBase = JSON.stringify([tenant, ALL_POLICIES]);
    for (const granularity of GRANULARITIES) {
      const start = bucketStart(timeMs, granularity);
      bump(
        this.totals,
        `${allBase}\u0000${granularity}\u0000${start}`,
        () => ({ tenant, policy: ALL_POLICIES, granularity, start, cost: 0, count: 0 }),
        cost,
      );
    }
    for (const { name: policy, key } of policies) {
      // Map ids: JSON because tenants and keys are free text; JSON never emits a raw NUL, so NUL can
      // then join the safe parts. Stringified once per policy, not per granularity (hot path).
      const base = JSON.stringify([tenant, policy]);
      const keyBase = JSON.stringify([tenant, policy, key]);
      for (const granularity of GRANULARITIES) {
        const start = bucketStart(timeMs, granularity);
        const bucket = `\u0000${granularity}\u0000${start}`;
        bump(
          this.totals,
          base + bucket,
          () => ({ tenant, policy, granularity, start, cost: 0, count: 0 }),
          cost,
        );
        bump(
          this.usage,
          keyBase + bucket,
          () => ({ tenant, policy, key, granularity, start, cost: 0, count: 0 }),
          cost,
        );
      }
      const day = bucketStart(timeMs, 'day');
      const topId = `${keyBase}\u0000${day}`;
      const top = this.top.get(topId) ?? { tenant, policy, day, key, cost: 0 };
      top.cost += cost;
      this.top.set(topId, top);
    }
  }

  private addDecision(event: DecisionEventV1, timeMs: number): void {
    const { data } = event;
    const version = data.policy_set_version;
    const firstSeen = this.versions.get(version);
    if (firstSeen === undefined || timeMs < firstSeen) this.versions.set(version, timeMs);

    const row = {
      id: event.id,
      timeMs,
      ...(typeof data.tenant === 'string' ? { tenant: data.tenant } : {}),
      count: data.count,
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

function bump<T extends { cost: number; count: number }>(
  map: Map<string, T>,
  id: string,
  create: () => T,
  cost: number,
): void {
  let entry = map.get(id);
  if (entry === undefined) {
    entry = create();
    map.set(id, entry);
  }
  entry.cost += cost;
  entry.count += 1;
}

function exhausted(policy: PolicyOutcomeV1) {
  return policy.windows.find((window) => window.would_deny === true);
}

function reasonOf(reason: string | undefined): { reason?: string } {
  return typeof reason === 'string' ? { reason } : {};
}

/** Event times passed validation as RFC 3339; `Date.parse` wants the upper-case `T`/`Z` form. */
function eventTimeMs(time: string): number {
  const ms = Date.parse(time.toUpperCase().replace(' ', 'T'));
  if (Number.isNaN(ms)) throw new RangeError(`event time is not RFC 3339: ${time}`);
  return ms;
}
