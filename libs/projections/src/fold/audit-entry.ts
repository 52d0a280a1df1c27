/**
 * - `denied`: denials of a key (coalesced per second, so `count` may be > 1), with the deny reason;
 * - `degraded`: allowed under fail_open without counting, with the backend failure as reason;
 * - `would_deny`: a shadow policy that would have denied (reason: the role of the exhausted window);
 * - `policy_reload`: a policy-set version seen for the first time (global, no tenant);
 * - `override`: a runtime override set or removed (`tally.override.v1`): before, after, who, why.
 */
export const AUDIT_TYPES = ['denied', 'degraded', 'would_deny', 'policy_reload', 'override'] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** One row of the audit trail. */
export interface AuditEntry {
  /** Event id it came from (`policy_reload:<version>` for reloads). */
  readonly id: string;
  /** Event time, epoch ms; stored as the sorted-set score, not in the member. */
  readonly timeMs: number;
  readonly type: AuditType;
  /** Absent for tenant-less requests and for policy reloads (both go to the `~` audit set). */
  readonly tenant?: string;
  readonly policy?: string;
  /** Deny reason, degraded cause, or the would-deny reason. */
  readonly reason?: string;
  /** Decisions this row stands for. */
  readonly count: number;
  /** The request's normalized selectors (token hashed); empty for reloads. */
  readonly selectors: Readonly<Record<string, string>>;
  readonly policySetVersion: string;
  /** `override` rows only: the change (its `reason` is the row's `reason`). */
  readonly change?: OverrideChangeRow;
}

/** What an `override` row keeps of its `tally.override.v1` event, as the event spells it. */
export interface OverrideChangeRow {
  readonly action: 'set' | 'remove';
  readonly key: string;
  readonly version: number;
  readonly set_by: string;
  readonly before?: OverrideStateRow;
  readonly after?: OverrideStateRow;
}

export interface OverrideStateRow {
  readonly version: number;
  readonly limits: Readonly<Record<string, number>>;
  readonly expires_at?: string;
  readonly reason: string;
  readonly set_by: string;
  readonly updated_at: string;
}

/**
 * The sorted-set member of an entry: everything but the time, which is the score. Deterministic, so
 * re-applying an entry is a no-op, and `ZADD … LT` keeps the earliest time when two projectors
 * record the same policy reload.
 */
export function auditMember(entry: AuditEntry): string {
  const member: unknown[] = [
    entry.id,
    entry.type,
    entry.tenant ?? null,
    entry.policy ?? null,
    entry.reason ?? null,
    entry.count,
    entry.selectors,
    entry.policySetVersion,
  ];
  // A ninth element only on override rows: the members of every other row stay what they were.
  if (entry.change !== undefined) member.push(entry.change);
  return JSON.stringify(member);
}

/** The entry of a stored member and its score, or null for a member this code did not write. */
export function auditEntryFromMember(member: string, scoreMs: number): AuditEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(member);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length < 8 || value.length > 9) return null;
  const [id, type, tenant, policy, reason, count, selectors, version, change] = value as unknown[];
  if (typeof id !== 'string' || !(AUDIT_TYPES as readonly unknown[]).includes(type)) return null;
  if (typeof count !== 'number' || typeof version !== 'string') return null;
  if (typeof selectors !== 'object' || selectors === null || Array.isArray(selectors)) return null;
  return {
    id,
    timeMs: scoreMs,
    type: type as AuditType,
    ...(typeof tenant === 'string' ? { tenant } : {}),
    ...(typeof policy === 'string' ? { policy } : {}),
    ...(typeof reason === 'string' ? { reason } : {}),
    count,
    selectors: selectors as Record<string, string>,
    policySetVersion: version,
    ...(type === 'override' && isObject(change) ? { change: change as unknown as OverrideChangeRow } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
