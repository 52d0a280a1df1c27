import {
  ALGORITHM_REGISTRY,
  encodeScope,
  policyStateKey,
  shardKeys,
  shardOf,
  type ReseedFold,
  type ReseedPlan,
  type ReseedWrite,
} from '@tally/engine';
import type { UsageEventV1 } from '@tally/events';
import { keyOf, type NormalizedSelectors, type Policy, type PolicySet, type WindowSpec } from '@tally/policy';

/** A window whose state `tally reseed` rebuilds, with what of the ledger matters now. */
export interface SustainedWindow {
  readonly policy: Policy;
  readonly window: WindowSpec;
  /** The algorithm's letter (the engine's registry): reseed.lua's `algorithm`. */
  readonly code: string;
  /** The registry's reseed plan for the window now: from when events count, and one fold per key. */
  readonly plan: ReseedPlan;
  /** A bucketed window's current bucket index (month index for calendar months); absent for gcra. */
  readonly bucket?: number;
  /** Earliest event time that still counts: the current bucket's start, the previous one's for sliding. */
  readonly sinceMs: number;
}

/**
 * The sustained windows of the set in force: those whose algorithm the engine's registry rebuilds
 * from usage (fixed and sliding windows of an hour or more, calendar months, gcra windows whose burst
 * takes an hour or more to come back; its `reseed` rule says why the others are not, e.g. a token
 * bucket keeps a level and refills within its period). Disabled policies count nothing, so they are
 * left out.
 */
export function sustainedWindows(set: PolicySet, nowMs: number, only?: string): SustainedWindow[] {
  const out: SustainedWindow[] = [];
  for (const policy of set.policies) {
    if (!policy.enabled || (only !== undefined && policy.name !== only)) continue;
    for (const window of policy.windows) {
      const entry = ALGORITHM_REGISTRY[window.algorithm];
      if ('skip' in entry.reseed) continue;
      const plan = entry.reseed.plan(window, nowMs);
      if (plan === undefined) continue;
      out.push({
        policy,
        window,
        code: entry.letter,
        plan,
        ...(plan.bucket !== undefined && { bucket: plan.bucket }),
        sinceMs: plan.sinceMs,
      });
    }
  }
  return out;
}

/** What to write into one window of a policy state hash (the engine's `reseedWriter`). */
export interface ReseedTarget extends ReseedWrite {
  readonly policy: string;
  /** The previous bucket counts (`previous` is meaningful). */
  readonly previousCounts: boolean;
}

/**
 * Folds the usage ledger into the sustained windows, key by key, exactly as the decision script
 * counted: every enforce policy of an allowed decision, and a shadow policy only when none of its
 * windows would have denied (the script commits a shadow policy all-or-nothing). Degraded decisions
 * were never counted (Redis had failed), so they are not counted now. Keys are recomputed with the
 * policy as it is now, since that is how the engine will look them up. Events seen twice (the relay
 * delivers at least once) count once.
 */
export class ReseedAccumulator {
  private readonly byPolicy = new Map<string, SustainedWindow[]>();
  private readonly folds = new Map<
    string,
    { readonly key: string; readonly window: SustainedWindow; readonly fold: ReseedFold }
  >();
  private readonly seen = new Set<string>();
  counted = 0;

  constructor(
    windows: readonly SustainedWindow[],
    private readonly shards: number,
    private readonly fromMs: number,
  ) {
    for (const w of windows) {
      const list = this.byPolicy.get(w.policy.name) ?? [];
      list.push(w);
      this.byPolicy.set(w.policy.name, list);
    }
  }

  add(event: UsageEventV1): void {
    if (event.data.outcome !== 'allowed' || this.seen.has(event.id)) return;
    this.seen.add(event.id);
    const timeMs = Date.parse(event.time);
    if (timeMs < this.fromMs) return;
    const selectors = event.data.selectors as NormalizedSelectors;
    const tenant = typeof event.data.tenant === 'string' ? event.data.tenant : selectors.tenant;
    const shard = shardKeys(shardOf(tenant, this.shards));
    const scope = encodeScope(tenant);
    let counted = false;
    for (const recorded of event.data.policies) {
      const windows = this.byPolicy.get(recorded.name);
      if (windows === undefined) continue;
      if (recorded.mode === 'shadow' && recorded.windows.some((w) => w.would_deny === true)) continue;
      const key = keyOf(windows[0].policy, selectors, event.data.attributes);
      if (!key.ok) continue;
      for (const w of windows) {
        if (timeMs < w.sinceMs) continue;
        const redisKey = policyStateKey(shard, scope, w.policy.name, key.value);
        // One fold per window: a policy's windows share its hash (one field each).
        const id = `${redisKey}\n${w.window.name}`;
        let entry = this.folds.get(id);
        if (entry === undefined) {
          entry = { key: redisKey, window: w, fold: w.plan.fold() };
          this.folds.set(id, entry);
        }
        entry.fold.add(timeMs, event.data.cost);
        counted = true;
      }
    }
    if (counted) this.counted++;
  }

  /** Sorted by key and window (the map's ids), so two runs write in the same order. */
  targets(): ReseedTarget[] {
    return [...this.folds]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, { key, window: w, fold }]) => {
        const r = fold.result();
        return {
          key,
          policy: w.policy.name,
          window: w.window.name,
          code: w.code,
          bucket: r.bucket,
          count: r.count,
          previous: r.previous,
          previousCounts: w.plan.previous,
          ttlMs: r.ttlMs,
        };
      });
  }
}
