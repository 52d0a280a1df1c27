import type { AuditType, OverrideChangeRow } from '../fold/audit-entry';
import type { QueryError } from './time-range';

/** Query parameters as received (strings), already checked for shape by the transport's DTO. */
export interface UsageRequest {
  readonly tenant: string;
  readonly policy?: string;
  /** One policy key of `policy` (`keys:` hashes); needs `policy`. */
  readonly key?: string;
  readonly granularity?: string;
  readonly from?: string;
  readonly to?: string;
  readonly cursor?: string;
  readonly limit?: string;
}

export interface AuditRequest {
  /** Absent: the tenant-less trail, which also holds policy reloads. */
  readonly tenant?: string;
  readonly since?: string;
  readonly limit?: string;
  readonly cursor?: string;
  /** Only rows of this type (a page may then hold fewer than `limit` rows while `next_cursor` is set). */
  readonly type?: string;
}

/** One row of `GET /v1/audit`. */
export interface AuditEntryView {
  readonly time: string;
  readonly type: AuditType;
  readonly policy?: string;
  /** Deny reason, degraded cause, would-deny reason; for `policy_reload`, the new policy-set version; for `override`, why it was changed. */
  readonly reason?: string;
  readonly count: number;
  readonly selectors: Readonly<Record<string, string>>;
  /** `override` rows: the change (action, key, version, set_by, before, after); `reason` is its why. */
  readonly override?: OverrideChangeRow;
}

export interface AuditView {
  readonly entries: readonly AuditEntryView[];
  readonly next_cursor: string | null;
}

export type QueryResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: QueryError[] };
