import { allShardKeys, parsePolicyStateKey, policyStateKeyPattern, unpackWindowState } from '@tally/engine';
import { NamespaceReader, ProjectionNamespaces, type AuditEntry } from '@tally/projections';
import { EnforcementComparison, type EnforcementDifference } from './enforcement-diff';
import { comparedWindows, type ComparedWindow, type SkippedWindow } from './enforcement-windows';
import { OpsError } from './ops.error';
import { loadPolicySet } from './policy-check';
import { scanKeys, type RedisClient } from '@tally/redis';
import { redisNowMs } from './redis-client';

export interface EnforcementReconcileOptions {
  /** The policy set in force (TALLY_POLICIES): only its windows have counters worth comparing. */
  readonly policiesFile: string;
  /** TALLY_SHARDS: where the engine keeps each tenant's counters and outbox. */
  readonly shards: number;
  /** Default: the active namespace. */
  readonly namespace?: string;
  readonly tenant?: string;
  readonly policy?: string;
  /** Tests: a fixed "now" instead of the Redis server clock the engine decides with. */
  readonly nowMs?: number;
}

export interface EnforcementReconcileResult {
  readonly namespace: string;
  readonly now: string;
  readonly windows: readonly {
    readonly policy: string;
    readonly window: string;
    readonly algorithm: string;
    readonly granularity: string;
    readonly bucket: string;
  }[];
  readonly skipped: readonly SkippedWindow[];
  /** Keys compared (window × tenant × key with a counter or projected usage in the current bucket). */
  readonly keys: number;
  /** Decisions in the outbox streams, not yet in the ledger: their counters are ahead of the projection. */
  readonly outboxPending: number;
  /** Hashes skipped because their window moved to a new bucket while the command ran. */
  readonly rolled: number;
  readonly differences: readonly EnforcementDifference[];
  /** Differences the audit trail does not explain (the exit code counts these). */
  readonly unexplained: number;
}

/**
 * `tally reconcile --enforcement`: the counters of the current buckets (fixed 1h/1d, sliding 1h/1d
 * current bucket, calendar months) against the projection's per-key usage of the same buckets. A
 * key with a counter but no projected usage, or the reverse, counts as zero on the missing side.
 * Read-only; the counters keep moving while it reads, so run it with the pipeline drained.
 */
export async function reconcileEnforcement(
  redis: RedisClient,
  options: EnforcementReconcileOptions,
): Promise<EnforcementReconcileResult> {
  const set = await loadPolicySet(options.policiesFile);
  if (options.policy !== undefined && !set.policies.some((p) => p.name === options.policy)) {
    throw new OpsError(`no policy named ${options.policy} in ${options.policiesFile}`, true);
  }
  const namespaces = new ProjectionNamespaces(redis);
  const namespace = options.namespace ?? (await namespaces.active());
  if (namespace === null) throw new OpsError('no active projection namespace; give --namespace');
  if (!(await namespaces.exists(namespace))) throw new OpsError(`no namespace ${namespace}`, true);
  const nowMs = options.nowMs ?? (await redisNowMs(redis));
  const { compared, skipped } = comparedWindows(set, nowMs, options.policy);

  const comparison = new EnforcementComparison();
  const projection = new NamespaceReader(redis);
  for (const window of compared) {
    await readCounters(redis, window, options, comparison);
    const bucket = {
      policy: window.policy.name,
      granularity: window.granularity,
      atMs: window.bucketStartMs,
    };
    for (const { tenant, key, cost } of await projection.keyCosts(namespace, bucket, options.tenant)) {
      comparison.addProjected(window, tenant, key, cost);
    }
  }
  const audit = new Map<string | null, AuditEntry[]>();
  const since = Math.min(nowMs, ...compared.map((w) => w.bucketStartMs));
  for (const tenant of comparison.tenantsToExplain()) {
    audit.set(tenant, await projection.auditSince(namespace, tenant, since));
  }
  const pending = await Promise.all(allShardKeys(options.shards).map((s) => redis.xlen(s.outbox)));
  const differences = comparison.differences(audit);
  return {
    namespace,
    now: new Date(nowMs).toISOString(),
    windows: compared.map((w) => ({
      policy: w.policy.name,
      window: w.window.name,
      algorithm: w.window.algorithm,
      granularity: w.granularity,
      bucket: new Date(w.bucketStartMs).toISOString(),
    })),
    skipped,
    keys: comparison.size,
    outboxPending: pending.reduce((a, b) => a + b, 0),
    rolled: comparison.rolled,
    differences,
    unexplained: differences.filter((d) => !d.explained).length,
  };
}

async function readCounters(
  redis: RedisClient,
  window: ComparedWindow,
  options: EnforcementReconcileOptions,
  comparison: EnforcementComparison,
): Promise<void> {
  const { name: policy } = window.policy;
  const tenant = options.tenant === undefined ? undefined : { name: options.tenant, shards: options.shards };
  const keys = await scanKeys(redis, policyStateKeyPattern(policy, tenant));
  // State hashes live in every shard's slot: one command each (a Cluster pipeline must stay in a slot).
  // The window is one field of its policy's hash; a hash without it has not counted this window.
  const { name, algorithm } = window.window;
  for (let i = 0; i < keys.length; i += 200) {
    const chunk = keys.slice(i, i + 200);
    const values = await Promise.all(chunk.map((key) => redis.hget(key, name)));
    chunk.forEach((key, j) => {
      const parts = parsePolicyStateKey(key, policy);
      if (parts === null || (options.tenant !== undefined && parts.tenant !== options.tenant)) return;
      if (values[j] === null) return;
      comparison.addCounter(window, parts.tenant, parts.key, unpackWindowState(algorithm, values[j]));
    });
  }
}
