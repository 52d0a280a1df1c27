import type { AuditEntry } from '@tally/projections';
import { keyOf } from '@tally/policy';
import type { ComparedWindow } from './enforcement-windows';

/** One enforcement counter next to the projection's usage of the same key and bucket. */
export interface EnforcementDifference {
  /** null: requests without a tenant. */
  readonly tenant: string | null;
  readonly policy: string;
  readonly window: string;
  readonly key: string;
  readonly granularity: string;
  /** The window's current bucket start, ISO 8601. */
  readonly bucket: string;
  /** Cost of the key in that projection bucket. */
  readonly projected: number;
  /** Units the counter holds for the current bucket; null when there is no live hash at all. */
  readonly counter: number | null;
  /** projected − counter. */
  readonly difference: number;
  /** Degraded decisions of this tenant and key in the bucket (audit trail): usage never counted. */
  readonly degraded: number;
  /** Allowed decisions of this shadow policy and key that it would have denied: never counted. */
  readonly wouldDeny: number;
  /**
   * The projection is higher and the audit trail shows degraded or would-deny decisions of the key in
   * the bucket, which the counter never holds. Their cost is not recorded, so this is "explainable",
   * not proven.
   */
  readonly explained: boolean;
}

interface Cell {
  readonly window: ComparedWindow;
  readonly tenant: string | null;
  readonly key: string;
  projected: number;
  counter: number | null;
}

/**
 * Joins the counters and the projected usage of the compared windows (a key on either side only
 * counts as zero on the other), then explains the differences from the audit trail. Pure: the
 * command reads Redis, this decides.
 */
export class EnforcementComparison {
  private readonly cells = new Map<string, Cell>();
  /** Hashes already written in a later bucket than the one compared (the window moved on meanwhile). */
  rolled = 0;

  /**
   * A live window hash. `b` is the bucket it holds: an older bucket means nothing was counted in
   * the current one yet (the engine reads it as zero); sliding windows' `c` is the current bucket.
   */
  addCounter(window: ComparedWindow, tenant: string | null, key: string, hash: Record<string, string>): void {
    const stored = Number(hash.b);
    if (hash.b === undefined || !Number.isFinite(stored)) return;
    if (stored > window.bucket) {
      this.rolled++;
      return;
    }
    this.cell(window, tenant, key).counter = stored === window.bucket ? Number(hash.c ?? 0) : 0;
  }

  addProjected(window: ComparedWindow, tenant: string | null, key: string, cost: number): void {
    this.cell(window, tenant, key).projected += cost;
  }

  /** Keys compared. */
  get size(): number {
    return this.cells.size;
  }

  /** Tenants of the cells whose projection is higher: only their audit trails can explain anything. */
  tenantsToExplain(): (string | null)[] {
    const out = new Set<string | null>();
    for (const c of this.cells.values()) if (c.projected > (c.counter ?? 0)) out.add(c.tenant);
    return [...out];
  }

  /** Every cell whose counter differs from the projection, sorted by tenant, policy, window, key. */
  differences(audit: ReadonlyMap<string | null, readonly AuditEntry[]>): EnforcementDifference[] {
    const out: EnforcementDifference[] = [];
    for (const c of this.cells.values()) {
      const difference = c.projected - (c.counter ?? 0);
      if (difference === 0) continue;
      const { degraded, wouldDeny } =
        difference > 0 ? uncounted(c, audit.get(c.tenant) ?? []) : { degraded: 0, wouldDeny: 0 };
      out.push({
        tenant: c.tenant,
        policy: c.window.policy.name,
        window: c.window.window.name,
        key: c.key,
        granularity: c.window.granularity,
        bucket: new Date(c.window.bucketStartMs).toISOString(),
        projected: c.projected,
        counter: c.counter,
        difference,
        degraded,
        wouldDeny,
        explained: difference > 0 && degraded + wouldDeny > 0,
      });
    }
    return out.sort(
      (a, b) =>
        compare(a.tenant ?? '', b.tenant ?? '') ||
        compare(a.policy, b.policy) ||
        compare(a.window, b.window) ||
        compare(a.key, b.key),
    );
  }

  private cell(window: ComparedWindow, tenant: string | null, key: string): Cell {
    const id = JSON.stringify([window.policy.name, window.window.name, tenant, key]);
    let cell = this.cells.get(id);
    if (cell === undefined) this.cells.set(id, (cell = { window, tenant, key, projected: 0, counter: null }));
    return cell;
  }
}

/**
 * Decisions of the cell's key in its bucket that the projection counts and the counter never held.
 * Degraded rows name only the first policy of their decision, so they are matched by key: a
 * degraded decision shows on every policy whose key it has. Would-deny rows of denied decisions
 * (they share the denial's id) spent nothing and are left out.
 */
function uncounted(cell: Cell, entries: readonly AuditEntry[]): { degraded: number; wouldDeny: number } {
  const { policy, bucketStartMs, bucketEndMs } = cell.window;
  const denied = new Set(entries.filter((e) => e.type === 'denied').map((e) => e.id));
  let degraded = 0;
  let wouldDeny = 0;
  for (const e of entries) {
    if (e.timeMs < bucketStartMs || e.timeMs >= bucketEndMs) continue;
    const isDegraded = e.type === 'degraded';
    const isWouldDeny = e.type === 'would_deny' && e.policy === policy.name && !denied.has(e.id);
    if (!isDegraded && !isWouldDeny) continue;
    const key = keyOf(policy, e.selectors);
    if (!key.ok || key.value !== cell.key) continue;
    if (isDegraded) degraded += e.count;
    else wouldDeny += e.count;
  }
  return { degraded, wouldDeny };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
