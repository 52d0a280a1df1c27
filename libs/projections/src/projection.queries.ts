import type { ProjectionRedis } from './apply-batch.script';
import { auditEntryFromMember, type AuditType } from './audit-entry';
import { nextAuditCursor, parseAuditQuery } from './audit-query';
import { bucketPage, parsePageSize } from './bucket-pages';
import { ALL_POLICIES } from './fold-events';
import { ProjectionKeys, usageField } from './projection-keys';
import { coverRange } from './range-cover';
import { parseUsageRange, type QueryError } from './time-range';
import { mergeTotals, type Totals } from './totals';
import { readUsageHash } from './usage-hash';
import { bucketRows, formatInstant, type UsageBucketView, type UsageView } from './usage-page';

/** Query parameters as received (strings), already checked for shape by the transport's DTO. */
export interface UsageRequest {
  readonly tenant: string;
  readonly policy?: string;
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
}

/** One row of `GET /v1/audit`. */
export interface AuditEntryView {
  readonly time: string;
  readonly type: AuditType;
  readonly policy?: string;
  /** Deny reason, degraded cause, would-deny reason; for `policy_reload`, the new policy-set version. */
  readonly reason?: string;
  readonly count: number;
  readonly selectors: Readonly<Record<string, string>>;
}

export interface AuditView {
  readonly entries: readonly AuditEntryView[];
  readonly next_cursor: string | null;
}

export type QueryResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: QueryError[] };

/**
 * Reads of the query API. A usage page is one pipelined read per bucket start of the page; the
 * range `total` is read from the few buckets of `coverRange`, whatever the page.
 */
export class ProjectionQueries {
  constructor(
    private readonly redis: ProjectionRedis,
    private readonly clock: () => number,
  ) {}

  async usage(namespace: string, request: UsageRequest): Promise<QueryResult<UsageView>> {
    const range = parseUsageRange(request, this.clock());
    const size = parsePageSize(request.limit);
    if (!range.ok || !size.ok) return { ok: false, errors: [...errorsOf(range), ...errorsOf(size)] };
    const scope = JSON.stringify([namespace, request.tenant, request.policy ?? null]);
    const page = bucketPage(range.value, { pageSize: size.value, cursor: request.cursor, scope });
    if (!page.ok) return page;

    const keys = new ProjectionKeys(namespace);
    const { granularity } = range.value;
    const { policy, tenant } = request;
    const rows = this.redis.pipeline();
    for (const start of page.value.starts) {
      const key = keys.usage(tenant, granularity, start);
      if (policy === undefined) rows.hgetall(key);
      else rows.hmget(key, usageField('cost', policy), usageField('count', policy));
    }
    const totalField = policy ?? ALL_POLICIES;
    const cover = this.redis.pipeline();
    for (const bucket of coverRange(range.value.fromMs, range.value.toMs)) {
      const key = keys.usage(tenant, bucket.granularity, bucket.start);
      cover.hmget(key, usageField('cost', totalField), usageField('count', totalField));
    }
    const [rowReplies, coverReplies] = await Promise.all([rows.exec(), cover.exec()]);

    const buckets: UsageBucketView[] = [];
    page.value.starts.forEach((start, i) => {
      const value = replyOf(rowReplies, i);
      const totals =
        policy === undefined
          ? readUsageHash(value as Record<string, string>)
          : new Map([[policy, pairTotals(value)]]);
      buckets.push(...bucketRows(start, totals, policy));
    });
    const total = mergeTotals(...(coverReplies ?? []).map((_, i) => pairTotals(replyOf(coverReplies, i))));
    return {
      ok: true,
      value: { tenant, granularity, buckets, total, next_cursor: page.value.nextCursor },
    };
  }

  async audit(namespace: string, request: AuditRequest): Promise<QueryResult<AuditView>> {
    const parsed = parseAuditQuery(request, this.clock());
    if (!parsed.ok) return parsed;
    const { position, limit } = parsed.value;
    const key = new ProjectionKeys(namespace).audit(request.tenant ?? null);
    const flat = await this.redis.zrange(
      key,
      position.scoreMs,
      '+inf',
      'BYSCORE',
      'LIMIT',
      position.skip,
      limit,
      'WITHSCORES',
    );
    const entries: AuditEntryView[] = [];
    const scores: number[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const score = Number(flat[i + 1]);
      scores.push(score);
      const entry = auditEntryFromMember(flat[i] ?? '', score);
      if (entry === null) continue;
      entries.push({
        time: formatInstant(entry.timeMs),
        type: entry.type,
        ...(entry.policy === undefined ? {} : { policy: entry.policy }),
        ...(entry.type === 'policy_reload'
          ? { reason: entry.policySetVersion }
          : entry.reason === undefined
            ? {}
            : { reason: entry.reason }),
        count: entry.count,
        selectors: entry.selectors,
      });
    }
    return { ok: true, value: { entries, next_cursor: nextAuditCursor(parsed.value, scores) } };
  }
}

function errorsOf<T>(parsed: { ok: true; value: T } | { ok: false; errors: QueryError[] }): QueryError[] {
  return parsed.ok ? [] : parsed.errors;
}

type PipelineReplies = [error: Error | null, result: unknown][] | null;

function replyOf(replies: PipelineReplies, i: number): unknown {
  const reply = replies?.[i];
  if (reply === undefined) throw new Error('projection read: missing pipeline reply');
  if (reply[0] !== null) throw reply[0];
  return reply[1];
}

/** HMGET of a `cost:` / `count:` field pair. */
function pairTotals(value: unknown): Totals {
  const [cost, count] = Array.isArray(value) ? (value as (string | null)[]) : [];
  return { cost: Number(cost ?? 0), count: Number(count ?? 0) };
}
