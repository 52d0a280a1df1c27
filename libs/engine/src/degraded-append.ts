import { Cluster } from 'ioredis';
import type { RedisClient } from '@tally/redis';
import { DEGRADED_RESULTS } from '@tally/events';
import type { DegradedEntry } from './degraded-entry';

/**
 * Appends degraded entries to their shard outboxes with the fields decide.lua writes (`p`, `t`, `r`),
 * in buffer order. A plain XADD per entry, pipelined: nothing needs to be atomic with it (no counter
 * was touched), and each reply acknowledges exactly one entry. One pipeline on a single node; on
 * Cluster one per shard (a pipeline must stay in one slot), in parallel.
 *
 * Returns the entries Redis acknowledged. An entry whose reply was lost (deadline, dropped
 * connection) may still have been appended: it is retried and then appears twice in the outbox, which
 * costs nothing downstream because events are deduplicated by decision id.
 * @throws the first failure when nothing at all was acknowledged, for the caller to classify.
 */
export async function appendDegradedEntries(
  redis: RedisClient,
  entries: readonly DegradedEntry[],
): Promise<Set<DegradedEntry>> {
  const groups = redis instanceof Cluster ? byShard(entries) : [entries];
  const settled = await Promise.allSettled(groups.map((group) => appendGroup(redis, group)));
  const acked = new Set<DegradedEntry>();
  let firstError: Error | undefined;
  for (const outcome of settled) {
    if (outcome.status === 'fulfilled') {
      for (const entry of outcome.value.acked) acked.add(entry);
      firstError ??= outcome.value.error;
    } else {
      firstError ??= outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
    }
  }
  if (acked.size === 0 && entries.length > 0 && firstError !== undefined) throw firstError;
  return acked;
}

async function appendGroup(
  redis: RedisClient,
  group: readonly DegradedEntry[],
): Promise<{ acked: DegradedEntry[]; error?: Error }> {
  const pipeline = redis.pipeline();
  for (const e of group)
    pipeline.xadd(e.outbox, '*', 'p', e.payload, 't', String(e.timeMs), 'r', DEGRADED_RESULTS);
  const replies = await pipeline.exec();
  if (replies === null) throw new Error('redis discarded the pipeline');
  const acked: DegradedEntry[] = [];
  let error: Error | undefined;
  replies.forEach(([err], i) => {
    if (err) error ??= err;
    else acked.push(group[i]);
  });
  return error === undefined ? { acked } : { acked, error };
}

function byShard(entries: readonly DegradedEntry[]): DegradedEntry[][] {
  const groups = new Map<number, DegradedEntry[]>();
  for (const e of entries) {
    const group = groups.get(e.shard);
    if (group) group.push(e);
    else groups.set(e.shard, [e]);
  }
  return [...groups.values()];
}
