import type { CommittedOffset, PartitionLag, TopicPartitionOffsets } from './kafka-admin.port';

/**
 * Joins topic watermarks with a group's commits. A commit below `low` (records deleted by
 * retention) counts only what can still be read.
 */
export function computeLag(
  watermarks: readonly TopicPartitionOffsets[],
  committed: readonly CommittedOffset[],
): PartitionLag[] {
  const commits = new Map(committed.map((c) => [`${c.topic}/${c.partition}`, c.offset]));
  return watermarks.map((w) => {
    const commit = commits.get(`${w.topic}/${w.partition}`) ?? null;
    const from = commit === null || BigInt(commit) < BigInt(w.low) ? BigInt(w.low) : BigInt(commit);
    const lag = BigInt(w.high) > from ? BigInt(w.high) - from : 0n;
    return { ...w, committed: commit, lag: Number(lag) };
  });
}

/** Kafka commits name the next record to read: processing offset N commits N + 1. */
export function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}
