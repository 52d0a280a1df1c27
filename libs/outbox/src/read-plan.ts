import type { StreamEntry } from './stream-entries';

/** One XREADGROUP call: these streams, up to `count` new entries from each. */
export interface ReadCall {
  readonly keys: readonly string[];
  readonly count: number;
  /** Wait this long for new entries when there are none (absent: answer at once). */
  readonly blockMs?: number;
}

/** Fewer entries per stream than this per call costs more round trips than it saves memory. */
const MIN_COUNT = 10;

/**
 * Pure: which XREADGROUP calls make the next batch of about `budget` entries.
 * - Idle (no stream was backlogged last time): every stream, the budget split evenly; with `blockMs`
 *   (the relay found nothing last time) blocking on a single node, so an idle relay costs one round
 *   trip per `blockMs` and the first new entry wakes it at once.
 * - Backlogged ("hot" streams returned a full count): half the budget to the hot streams, half to the
 *   others, without blocking, so one busy tenant drains fast and never starves the other shards.
 * On Redis Cluster (`perKey`) a call may name keys of one slot only and every shard has its own
 * hash tag, so each stream gets its own non-blocking call (the caller polls with a backoff).
 */
export function planReads(
  streams: readonly string[],
  hot: ReadonlySet<string>,
  budget: number,
  options: { readonly blockMs?: number; readonly perKey: boolean },
): ReadCall[] {
  const share = (n: number, of: number): number => Math.max(MIN_COUNT, Math.ceil(of / Math.max(n, 1)));
  const hotKeys = streams.filter((s) => hot.has(s));
  if (hotKeys.length === 0) {
    const count = share(streams.length, budget);
    if (options.perKey) return streams.map((key) => ({ keys: [key], count }));
    return [{ keys: streams, count, ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }) }];
  }
  const cold = streams.filter((s) => !hot.has(s));
  // Every stream hot (a backlog spread over all shards): the whole budget, not half of it.
  const hotBudget = cold.length === 0 ? budget : budget / 2;
  const groups = [
    { keys: hotKeys, count: share(hotKeys.length, hotBudget) },
    { keys: cold, count: share(cold.length, budget / 2) },
  ].filter((g) => g.keys.length > 0);
  if (options.perKey) return groups.flatMap((g) => g.keys.map((key) => ({ keys: [key], count: g.count })));
  return groups;
}

/** The streams that returned as many entries as asked: more are probably waiting. */
export function backloggedStreams(calls: readonly ReadCall[], entries: readonly StreamEntry[]): Set<string> {
  const asked = new Map<string, number>();
  for (const call of calls) for (const key of call.keys) asked.set(key, call.count);
  const got = new Map<string, number>();
  for (const entry of entries) got.set(entry.stream, (got.get(entry.stream) ?? 0) + 1);
  return new Set([...got].filter(([stream, n]) => n >= (asked.get(stream) ?? Infinity)).map(([s]) => s));
}
