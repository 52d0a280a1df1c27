import type { RedisClient } from '@tally/redis';
import { MAX_AGGREGATE } from '../fold/exact-counter';
import { mergeTotals, type Totals } from '../fold/totals';
import type { ProjectionKeys } from '../sink/projection-keys';
import type { BucketRead } from './usage-source';

type PipelineReplies = [error: Error | null, result: unknown][] | null;

/**
 * Runs `reads(shard)` on every shard of a namespace, one pipeline per shard (a shard is one Cluster
 * slot, and a Cluster pipeline must stay on one node), the shards side by side. Returns the decoded
 * replies per shard, read for read.
 */
export async function readShards<T>(
  redis: RedisClient,
  shards: readonly ProjectionKeys[],
  reads: (keys: ProjectionKeys) => readonly BucketRead<T>[],
): Promise<T[][]> {
  return Promise.all(
    shards.map(async (keys) => {
      const list = reads(keys);
      if (list.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const read of list) read.queue(pipeline);
      const replies = await pipeline.exec();
      return list.map((read, i) => read.decode(replyOf(replies, i)));
    }),
  );
}

/** Read `i` of every shard, summed (`mergeTotals`: callers compare with `MAX_AGGREGATE`). */
export function sumAcross(perShard: readonly (readonly Totals[])[], i: number): Totals {
  return mergeTotals(...perShard.map((replies) => replies[i] ?? { cost: 0, count: 0 }));
}

/** Read `i` of every shard (totals per policy), summed policy by policy. */
export function sumMapsAcross(
  perShard: readonly (readonly ReadonlyMap<string, Totals>[])[],
  i: number,
): Map<string, Totals> {
  const out = new Map<string, Totals>();
  for (const replies of perShard) {
    for (const [name, totals] of replies[i] ?? []) {
      const known = out.get(name);
      out.set(name, known === undefined ? totals : mergeTotals(known, totals));
    }
  }
  return out;
}

/** A sum past 2^53 − 1 is no longer exact as a JSON number: the caller refuses to answer it. */
export function isInexact(totals: Totals): boolean {
  return totals.cost > MAX_AGGREGATE || totals.count > MAX_AGGREGATE;
}

function replyOf(replies: PipelineReplies, i: number): unknown {
  const reply = replies?.[i];
  if (reply === undefined) throw new Error('projection read: missing pipeline reply');
  if (reply[0] !== null) throw reply[0];
  return reply[1];
}
