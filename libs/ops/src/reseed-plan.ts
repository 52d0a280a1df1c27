import {
  ALGORITHM_REGISTRY,
  encodeScope,
  policyStateKey,
  shardKeys,
  shardOf,
  type ReseedRule,
  type ReseedWrite,
} from '@tally/engine';
import type { UsageEventV1 } from '@tally/events';
import { keyOf, type NormalizedSelectors, type Policy, type PolicySet, type WindowSpec } from '@tally/policy';

/** A window whose counter `tally reseed` rebuilds, with the buckets that matter now. */
export interface SustainedWindow {
  readonly policy: Policy;
  readonly window: WindowSpec;
  /** The algorithm's letter (the engine's registry): reseed.lua's `algorithm`. */
  readonly code: string;
  /** How the engine buckets this window's usage (the registry's reseed rule). */
  readonly rule: ReseedRule;
  /** Current bucket index, as the engine computes it (month index for calendar months). */
  readonly bucket: number;
  /** Earliest event time that still counts: the current bucket's start, the previous one's for sliding. */
  readonly sinceMs: number;
  /** PEXPIRE the engine would set on a commit now. */
  readonly ttlMs: number;
}

/**
 * The sustained windows of the set in force: those whose algorithm the engine's registry rebuilds
 * from usage (fixed and sliding windows of an hour or more, calendar months; its `reseed` rule says
 * why the others are not, e.g. a token bucket keeps a level, not a sum, and a loss just refills it).
 * Disabled policies count nothing, so they are left out.
 */
export function sustainedWindows(set: PolicySet, nowMs: number, only?: string): SustainedWindow[] {
  const out: SustainedWindow[] = [];
  for (const policy of set.policies) {
    if (!policy.enabled || (only !== undefined && policy.name !== only)) continue;
    for (const window of policy.windows) {
      const entry = ALGORITHM_REGISTRY[window.algorithm];
      const rule = entry.reseed;
      if ('skip' in rule) continue;
      const planned = rule.plan(window, nowMs);
      if (planned === undefined) continue;
      const sinceMs = rule.previous ? planned.previousStartMs : planned.startMs;
      out.push({
        policy,
        window,
        code: entry.letter,
        rule,
        bucket: planned.bucket,
        sinceMs,
        ttlMs: planned.ttlMs,
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
 * Sums the usage ledger into the sustained windows' current buckets, exactly as the decision script
 * counted: every enforce policy of an allowed decision, and a shadow policy only when none of its
 * windows would have denied (the script commits a shadow policy all-or-nothing). Degraded decisions
 * were never counted (Redis had failed), so they are not counted now. Keys are recomputed with the
 * policy as it is now, since that is how the engine will look them up. Events seen twice (the relay
 * delivers at least once) count once.
 */
export class ReseedAccumulator {
  private readonly byPolicy = new Map<string, SustainedWindow[]>();
  private readonly targetsByKey = new Map<string, { -readonly [K in keyof ReseedTarget]: ReseedTarget[K] }>();
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
        const eventBucket = w.rule.bucketOf(w.window, timeMs);
        const current = eventBucket === w.bucket;
        if (!current && !(w.rule.previous && eventBucket === w.bucket - 1)) continue;
        const redisKey = policyStateKey(shard, scope, w.policy.name, key.value);
        // One target per window: a policy's windows share its hash (one field each).
        const id = `${redisKey}\n${w.window.name}`;
        const target = this.targetsByKey.get(id) ?? {
          key: redisKey,
          policy: w.policy.name,
          window: w.window.name,
          code: w.code,
          bucket: w.bucket,
          count: 0,
          previous: 0,
          previousCounts: w.rule.previous,
          ttlMs: w.ttlMs,
        };
        if (current) target.count += event.data.cost;
        else target.previous += event.data.cost;
        this.targetsByKey.set(id, target);
        counted = true;
      }
    }
    if (counted) this.counted++;
  }

  /** Sorted by key and window (the map's ids), so two runs write in the same order. */
  targets(): ReseedTarget[] {
    return [...this.targetsByKey]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, target]) => target);
  }
}
