import { join } from 'node:path';
import { defineScript, luaScript, type RedisClient } from '@tally/redis';
import { DEGRADED_RESULTS } from '@tally/events';
import type { DegradedEntry } from './degraded-entry';

/** The custom command `tallyDegradedAppend` (2 keys: the shard's outbox, the decision's marker). */
const DEGRADED_APPEND = luaScript(join(__dirname, '..'), 'degraded-append.lua', 'tallyDegradedAppend', 2);

export function defineDegradedAppend(redis: RedisClient): void {
  defineScript(redis, DEGRADED_APPEND);
}

/**
 * The entries of a batch per shard, each group in batch order. A shard's group is one outbox stream
 * in one slot: the unit that is appended, and that succeeds or fails, on its own.
 */
export function degradedShards(entries: readonly DegradedEntry[]): DegradedEntry[][] {
  const groups = new Map<number, DegradedEntry[]>();
  for (const e of entries) {
    const group = groups.get(e.shard);
    if (group) group.push(e);
    else groups.set(e.shard, [e]);
  }
  return [...groups.values()];
}

/**
 * Appends one shard's entries with the fields decide.lua writes (`p`, `t`, `r`), in order: one
 * degraded-append.lua per entry, pipelined (one slot, one node). Each reply acknowledges exactly one
 * entry, whether it appended it now or found its marker (appended by an earlier attempt whose reply was
 * lost): both mean "in the outbox once". Nothing needs to be atomic across entries: no counter moves.
 *
 * Returns the acknowledged entries.
 * @throws the first failure when none was acknowledged, for the caller to classify.
 */
export async function appendShardEntries(
  redis: RedisClient,
  group: readonly DegradedEntry[],
  markerTtlMs: number,
): Promise<DegradedEntry[]> {
  defineDegradedAppend(redis);
  const pipeline = redis.pipeline();
  const append = (pipeline as unknown as Record<string, (...args: (string | number)[]) => unknown>)[
    DEGRADED_APPEND.name
  ].bind(pipeline);
  for (const e of group) append(e.outbox, e.marker, e.payload, e.timeMs, DEGRADED_RESULTS, markerTtlMs);
  const replies = await pipeline.exec();
  if (replies === null) throw new Error('redis discarded the pipeline');
  const acked: DegradedEntry[] = [];
  let error: Error | undefined;
  replies.forEach(([err], i) => {
    if (err) error ??= err;
    else acked.push(group[i]);
  });
  if (acked.length === 0 && error !== undefined) throw error;
  return acked;
}
