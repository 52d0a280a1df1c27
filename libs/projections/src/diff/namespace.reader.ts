import { auditEntryFromMember, type AuditEntry } from '../fold/audit-entry';
import type { Granularity } from '../fold/granularity';
import type { Totals } from '../fold/totals';
import { scanKeys, type RedisClient } from '@tally/redis';
import { ProjectionNamespaces } from '../namespaces/projection-namespaces';
import { readAuditPage } from '../queries/audit-merge';
import { mergeTotals } from '../fold/totals';
import { NO_TENANT_PART, type ProjectionKeys, decodeKeyPart, parseUsageKey } from '../sink/projection-keys';
import { readKeyUsageHash, readUsageHash } from '../sink/usage-hash';
import { usageCellId } from './diff-projections';

/** Hashes read per pipeline while scanning a namespace. */
const READ_CHUNK = 500;

/** The bucket of one enforcement window, whose per-key usage is compared with the counters. */
export interface KeyUsageBucket {
  readonly policy: string;
  readonly granularity: Granularity;
  /** Any instant inside the bucket. */
  readonly atMs: number;
}

/** A policy key's cost in one bucket, as the projection holds it. */
export interface ProjectedKeyCost {
  readonly tenant: string | null;
  readonly key: string;
  readonly cost: number;
}

/**
 * Whole-namespace reads for the offline comparisons (`tally reconcile`, `reconcile --enforcement`):
 * SCAN-based, so operator tools only, never the query API. The key layout stays inside this lib.
 * Every read covers every shard of the namespace and sums what shards hold of one cell.
 */
export class NamespaceReader {
  private readonly namespaces: ProjectionNamespaces;

  constructor(private readonly redis: RedisClient) {
    this.namespaces = new ProjectionNamespaces(redis);
  }

  /** Every usage cell (`usageCellId` → totals) of a namespace whose bucket `inRange` accepts. */
  async usageCells(
    namespace: string,
    inRange: (granularity: Granularity, start: number) => boolean,
  ): Promise<Map<string, Totals>> {
    const cells = new Map<string, Totals>();
    const found: string[] = [];
    for (const shard of await this.namespaces.shardKeys(namespace))
      found.push(...(await scanKeys(this.redis, shard.allUsage())));
    const keys = found
      .map((key) => ({ key, parts: parseUsageKey(key) }))
      .filter((k) => k.parts !== null && inRange(k.parts.granularity, k.parts.start));
    for (let i = 0; i < keys.length; i += READ_CHUNK) {
      const chunk = keys.slice(i, i + READ_CHUNK);
      // One command per key, not a pipeline: the keys of a chunk span shards (Cluster slots).
      const replies = await Promise.all(
        chunk.map(({ key }) =>
          this.redis.hgetall(key).then(
            (fields): [Error | null, unknown] => [null, fields],
            (error: unknown): [Error | null, unknown] => [error as Error, {}],
          ),
        ),
      );
      chunk.forEach(({ parts }, j) => {
        const [error, fields] = replies[j] ?? [null, {}];
        if (error !== null || parts === null) return;
        for (const [policy, totals] of readUsageHash(fields as Record<string, string>)) {
          const id = usageCellId({
            tenant: parts.tenant,
            policy,
            granularity: parts.granularity,
            start: parts.start,
          });
          const known = cells.get(id);
          cells.set(id, known === undefined ? totals : mergeTotals(known, totals));
        }
      });
    }
    return cells;
  }

  /** The per-key cost of one policy's bucket: of `tenant`, or of every tenant when undefined. */
  async keyCosts(namespace: string, bucket: KeyUsageBucket, tenant?: string): Promise<ProjectedKeyCost[]> {
    // A key's cost summed over the shards that hold part of it.
    const sums = new Map<string, ProjectedKeyCost>();
    for (const projection of await this.namespaces.shardKeys(namespace)) {
      for (const cost of await this.shardKeyCosts(projection, bucket, tenant)) {
        const id = JSON.stringify([cost.tenant, cost.key]);
        const known = sums.get(id);
        sums.set(id, known === undefined ? cost : { ...cost, cost: known.cost + cost.cost });
      }
    }
    return [...sums.values()];
  }

  private async shardKeyCosts(
    projection: ProjectionKeys,
    bucket: KeyUsageBucket,
    tenant?: string,
  ): Promise<ProjectedKeyCost[]> {
    const at = (t: string | null) => projection.keyUsage(t, bucket.policy, bucket.granularity, bucket.atMs);
    let hashes: { tenant: string | null; key: string }[];
    if (tenant !== undefined) {
      hashes = [{ tenant, key: at(tenant) }];
    } else {
      // The contract's own key with the tenant part as a wildcard: `…:keys:*:<policy>:<gran>:<b>`.
      const [head, tail] = at(null).split(`:keys:${NO_TENANT_PART}:`);
      const found = await scanKeys(this.redis, `${head}:keys:*:${tail}`);
      hashes = found.flatMap((key) => {
        const part = key.slice(`${head}:keys:`.length, key.length - tail.length - 1);
        const t = part === NO_TENANT_PART ? null : decodeKeyPart(part);
        return part.includes(':') || (t === null && part !== NO_TENANT_PART) ? [] : [{ tenant: t, key }];
      });
    }
    const out: ProjectedKeyCost[] = [];
    for (const { tenant: t, key } of hashes) {
      for (const [policyKey, { cost }] of readKeyUsageHash(await this.redis.hgetall(key))) {
        out.push({ tenant: t, key: policyKey, cost });
      }
    }
    return out;
  }

  /** A tenant's audit trail from `sinceMs` on (`null`: the tenant-less trail). */
  async auditSince(namespace: string, tenant: string | null, sinceMs: number): Promise<AuditEntry[]> {
    const keys = (await this.namespaces.shardKeys(namespace)).map((shard) => shard.audit(tenant));
    const lengths = await Promise.all(keys.map((key) => this.redis.zcard(key)));
    const all = lengths.reduce((n, length) => n + length, 0);
    if (all === 0) return [];
    // The whole trail from `sinceMs`, merged over shards as one page (reloads once, at their first time).
    const rows = await readAuditPage(this.redis, keys, { scoreMs: sinceMs, skip: 0 }, all);
    const out: AuditEntry[] = [];
    for (const { member, score } of rows) {
      const entry = auditEntryFromMember(member, score);
      if (entry !== null) out.push(entry);
    }
    return out;
  }
}
