import type { RedisClient } from '@tally/redis';
import { auditEntryFromMember } from '../fold/audit-entry';
import { nextAuditCursor, parseAuditQuery } from './audit-query';
import { bucketPage, parsePageSize } from './bucket-pages';
import { MAX_AGGREGATE } from '../fold/exact-counter';
import { parsePolicyKeyParam } from './policy-key-param';
import { ProjectionCorruptError } from './projection-corrupt.error';
import { ProjectionKeys } from '../sink/projection-keys';
import { coverRange } from './range-cover';
import type { AuditEntryView, AuditRequest, AuditView, QueryResult, UsageRequest } from './query-views';
import { parseUsageRange, type QueryError } from './time-range';
import { parseTopKeysQuery, type TopKeysRequest, type TopKeysView } from './top-keys-query';
import { readTopKeys } from './top-keys.reader';
import { mergeTotals } from '../fold/totals';
import { bucketRows, formatInstant, type UsageBucketView, type UsageView } from './usage-page';
import { usageSource } from './usage-source';

/**
 * Reads of the query API. A usage page is one pipelined read per bucket start of the page; the
 * range `total` is read from the few buckets of `coverRange`, whatever the page (`usageSource` says
 * which hash and fields, for a tenant, a policy or one key). Top keys read one `keys:` hash.
 */
export class ProjectionQueries {
  constructor(
    private readonly redis: RedisClient,
    private readonly clock: () => number,
  ) {}

  async usage(namespace: string, request: UsageRequest): Promise<QueryResult<UsageView>> {
    const range = parseUsageRange(request, this.clock());
    const size = parsePageSize(request.limit);
    const key = parsePolicyKeyParam(request);
    if (!range.ok || !size.ok || !key.ok) {
      return { ok: false, errors: [...errorsOf(range), ...errorsOf(size), ...errorsOf(key)] };
    }
    // The key joins the scope only when given, so cursors of key-less queries keep their meaning.
    const scope = JSON.stringify([
      namespace,
      request.tenant,
      request.policy ?? null,
      ...(key.value === undefined ? [] : [key.value]),
    ]);
    const page = bucketPage(range.value, { pageSize: size.value, cursor: request.cursor, scope });
    if (!page.ok) return page;

    const { granularity } = range.value;
    const { policy, tenant } = request;
    const source = usageSource(new ProjectionKeys(namespace), { tenant, policy, key: key.value });
    const rowReads = page.value.starts.map((start) => source.rows(granularity, start));
    const totalReads = coverRange(range.value.fromMs, range.value.toMs).map((bucket) =>
      source.total(bucket.granularity, bucket.start),
    );
    const rows = this.redis.pipeline();
    for (const read of rowReads) read.queue(rows);
    const cover = this.redis.pipeline();
    for (const read of totalReads) read.queue(cover);
    const [rowReplies, coverReplies] = await Promise.all([rows.exec(), cover.exec()]);

    const buckets: UsageBucketView[] = page.value.starts.flatMap((start, i) =>
      bucketRows(start, rowReads[i].decode(replyOf(rowReplies, i)), policy),
    );
    const total = mergeTotals(...totalReads.map((read, i) => read.decode(replyOf(coverReplies, i))));
    // Every bucket holds at most 2^53 − 1, but a range of many may sum past it, where a JSON number
    // stops being exact for most callers: refused rather than answered rounded.
    if (total.cost > MAX_AGGREGATE || total.count > MAX_AGGREGATE) {
      const message = `the total of this range exceeds ${MAX_AGGREGATE} and cannot be answered exactly; query a shorter range`;
      return { ok: false, errors: [{ field: 'from', message }] };
    }
    return {
      ok: true,
      value: {
        tenant,
        granularity,
        ...(key.value === undefined ? {} : { key: key.value }),
        buckets,
        total,
        next_cursor: page.value.nextCursor,
      },
    };
  }

  /**
   * The heaviest keys of one policy in ONE bucket, from its `keys:` hash (`readTopKeys`: HGETALL or
   * HSCAN by size). A stored value that does not read throws `ProjectionCorruptError`.
   */
  async topKeys(namespace: string, request: TopKeysRequest): Promise<QueryResult<TopKeysView>> {
    const parsed = parseTopKeysQuery(request, this.clock());
    if (!parsed.ok) return parsed;
    const { granularity, startMs, limit } = parsed.value;
    const { tenant, policy } = request;
    const hash = new ProjectionKeys(namespace).keyUsage(tenant, policy, granularity, startMs);
    const top = await readTopKeys(
      this.redis,
      hash,
      limit,
      (key) => new ProjectionCorruptError({ namespace, tenant, policy, granularity, startMs, key }),
    );
    return {
      ok: true,
      value: {
        tenant,
        policy,
        granularity,
        start: formatInstant(startMs),
        keys: top.keys,
        distinct_keys: top.distinct,
      },
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
