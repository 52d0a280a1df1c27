import type { RedisClient } from '@tally/redis';
import { auditEntryFromMember } from '../fold/audit-entry';
import { nextAuditCursor, parseAuditQuery } from './audit-query';
import { bucketPage, parsePageSize } from './bucket-pages';
import { MAX_AGGREGATE } from '../fold/exact-counter';
import { parsePolicyKeyParam } from './policy-key-param';
import { ProjectionCorruptError } from './projection-corrupt.error';
import { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { readAuditPage } from './audit-merge';
import { isInexact, readShards, sumAcross, sumMapsAcross } from './shard-reads';
import { coverRange } from './range-cover';
import type { AuditEntryView, AuditRequest, AuditView, QueryResult, UsageRequest } from './query-views';
import { parseUsageRange, type QueryError } from './time-range';
import { parseTopKeysQuery, type TopKeysRequest, type TopKeysView } from './top-keys-query';
import { readTopKeys } from './top-keys.reader';
import { mergeTotals } from '../fold/totals';
import { bucketRows, formatInstant, type UsageBucketView, type UsageView } from './usage-page';
import { usageSource } from './usage-source';

/**
 * Reads of the query API. A namespace is divided into shards (`shardOfPartition`), each holding the
 * usage of the events of its partitions: every read is made in every shard and summed, exactly (a
 * sum past 2^53 − 1 is refused, never rounded). A usage page is one pipelined read per bucket start
 * of the page and shard; the range `total` is read from the few buckets of `coverRange`, whatever
 * the page (`usageSource` says which hash and fields, for a tenant, a policy or one key). Top keys
 * read one `keys:` hash per shard.
 */
export class ProjectionQueries {
  private readonly namespaces: ProjectionNamespaces;

  constructor(
    private readonly redis: RedisClient,
    private readonly clock: () => number,
  ) {
    this.namespaces = new ProjectionNamespaces(redis);
  }

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
    const shards = await this.namespaces.shardKeys(namespace);
    const whose = { tenant, policy, key: key.value };
    const cover = coverRange(range.value.fromMs, range.value.toMs);
    const [rowReplies, coverReplies] = await Promise.all([
      readShards(this.redis, shards, (keys) =>
        page.value.starts.map((start) => usageSource(keys, whose).rows(granularity, start)),
      ),
      readShards(this.redis, shards, (keys) =>
        cover.map((bucket) => usageSource(keys, whose).total(bucket.granularity, bucket.start)),
      ),
    ]);

    const rows = page.value.starts.map((start, i) => ({ start, totals: sumMapsAcross(rowReplies, i) }));
    const total = mergeTotals(...cover.map((_, i) => sumAcross(coverReplies, i)));
    const cells = [total, ...rows.flatMap((row) => [...row.totals.values()])];
    // Every cell of a shard holds at most 2^53 − 1, but a bucket summed over shards, or a range of
    // many, may pass it, where a JSON number stops being exact for most callers: refused rather
    // than answered rounded.
    if (cells.some(isInexact)) {
      const message = `the total of this range exceeds ${MAX_AGGREGATE} and cannot be answered exactly; query a shorter range`;
      return { ok: false, errors: [{ field: 'from', message }] };
    }
    const buckets: UsageBucketView[] = rows.flatMap((row) => bucketRows(row.start, row.totals, policy));
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
   * The heaviest keys of one policy in ONE bucket, from its `keys:` hash in every shard
   * (`readTopKeys`: HGETALL or HSCAN by size, summed key by key across shards). A stored value that
   * does not read, or a sum past 2^53 − 1, throws `ProjectionCorruptError`.
   */
  async topKeys(namespace: string, request: TopKeysRequest): Promise<QueryResult<TopKeysView>> {
    const parsed = parseTopKeysQuery(request, this.clock());
    if (!parsed.ok) return parsed;
    const { granularity, startMs, limit } = parsed.value;
    const { tenant, policy } = request;
    const hashes = (await this.namespaces.shardKeys(namespace)).map((keys) =>
      keys.keyUsage(tenant, policy, granularity, startMs),
    );
    const top = await readTopKeys(
      this.redis,
      hashes,
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
    const shards = await this.namespaces.shardKeys(namespace);
    const rows = await readAuditPage(
      this.redis,
      shards.map((keys) => keys.audit(request.tenant ?? null)),
      position,
      limit,
    );
    const entries: AuditEntryView[] = [];
    const scores: number[] = [];
    for (const { member, score } of rows) {
      scores.push(score);
      const entry = auditEntryFromMember(member, score);
      // Filtered after the read: the cursor counts every row read, so paging stays exact.
      if (entry === null || (request.type !== undefined && entry.type !== request.type)) continue;
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
        ...(entry.change === undefined ? {} : { override: entry.change }),
      });
    }
    return { ok: true, value: { entries, next_cursor: nextAuditCursor(parsed.value, scores) } };
  }
}

function errorsOf<T>(parsed: { ok: true; value: T } | { ok: false; errors: QueryError[] }): QueryError[] {
  return parsed.ok ? [] : parsed.errors;
}
