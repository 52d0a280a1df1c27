import type { RedisClient } from '@tally/redis';
import type { AuditPosition } from './audit-query';

/** One row of an audit trail: its member and its score (time ms). */
export interface AuditRow {
  readonly member: string;
  readonly score: number;
}

/**
 * A page of a tenant's audit trail, whose rows are spread over the shards of a namespace: exactly
 * the page `ZRANGE key <scoreMs> +inf BYSCORE LIMIT <skip> <limit>` would give if all the rows were
 * in one sorted set, with rows ordered as Redis orders them (score, then member bytes). Each shard
 * gives its first `skip + limit` rows from the position, which hold the first `skip + limit` of the
 * union. A policy reload is recorded by every shard whose events first met the version, each at the
 * time it met it; one sorted set would hold it once at the earliest (ZADD LT), so a copy is kept
 * only at its lowest score over all shards (ZMSCORE), and the read widens when that leaves too few.
 */
export async function readAuditPage(
  redis: RedisClient,
  keys: readonly string[],
  position: AuditPosition,
  limit: number,
): Promise<AuditRow[]> {
  for (let want = position.skip + limit; ; want *= 2) {
    const perShard = await Promise.all(
      keys.map((key) =>
        redis.zrange(key, position.scoreMs, '+inf', 'BYSCORE', 'LIMIT', 0, want, 'WITHSCORES'),
      ),
    );
    const rows: AuditRow[] = [];
    for (const flat of perShard) {
      for (let i = 0; i + 1 < flat.length; i += 2) rows.push({ member: flat[i], score: Number(flat[i + 1]) });
    }
    rows.sort(compareRows);
    const kept = await firstCopies(redis, keys, rows);
    const more = perShard.some((flat) => flat.length / 2 >= want);
    if (kept.length >= want || !more) return kept.slice(position.skip, position.skip + limit);
  }
}

/** Redis's order within a sorted set: by score, then by member, byte by byte. */
function compareRows(a: AuditRow, b: AuditRow): number {
  return a.score - b.score || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member));
}

const RELOAD_PREFIX = '["policy_reload:';

/** The rows without the later copies of a reload recorded by more than one shard. */
async function firstCopies(
  redis: RedisClient,
  keys: readonly string[],
  rows: readonly AuditRow[],
): Promise<AuditRow[]> {
  const reloads = [...new Set(rows.filter((r) => r.member.startsWith(RELOAD_PREFIX)).map((r) => r.member))];
  if (reloads.length === 0 || keys.length === 1) return [...rows];
  const lowest = new Map<string, number>();
  const scores = await Promise.all(keys.map((key) => redis.zmscore(key, ...reloads)));
  for (const list of scores) {
    list.forEach((score, i) => {
      if (score === null) return;
      const member = reloads[i];
      const known = lowest.get(member);
      if (known === undefined || Number(score) < known) lowest.set(member, Number(score));
    });
  }
  const taken = new Set<string>();
  return rows.filter((row) => {
    if (!row.member.startsWith(RELOAD_PREFIX)) return true;
    if (taken.has(row.member) || lowest.get(row.member) !== row.score) return false;
    taken.add(row.member);
    return true;
  });
}
