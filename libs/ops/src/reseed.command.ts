import { parseUsageEvent } from '@tally/events';
import { TOPICS, type Ledger } from '@tally/ledger';
import { reseedWriter } from '@tally/engine';
import type { RedisClient } from '@tally/redis';
import { OpsError } from './ops.error';
import { loadPolicySet } from './policy-check';
import { ProgressMeter, throttled, type ProgressListener } from './progress';
import { redisNowMs } from './redis-client';
import { ReseedAccumulator, sustainedWindows, type ReseedTarget } from './reseed-plan';
import { planTopicRange, rangeSize, readTopicRanges } from './topic-range';

export interface ReseedOptions {
  /** The policy set in force (TALLY_POLICIES): only its windows are rebuilt. */
  readonly policiesFile: string;
  /** TALLY_SHARDS: the engine's hash-tag shards. */
  readonly shards: number;
  /** Only this policy. */
  readonly policy?: string;
  /** Read the ledger from here instead of the start of the oldest current window (epoch ms). */
  readonly fromMs?: number;
  /** Tests: a fixed "now" instead of the Redis server clock the engine decides with. */
  readonly nowMs?: number;
  /** Defaults to `tally.usage.v1`. */
  readonly topic?: string;
  readonly onProgress?: ProgressListener;
}

export interface ReseededWindow {
  readonly policy: string;
  readonly window: string;
  readonly algorithm: string;
  /** Usage from this instant on counts in the window now. */
  readonly since: string;
  /** True when `--from` is later than `since`: the rebuilt count may be short (never too high). */
  readonly partial: boolean;
}

export interface ReseededKey {
  readonly key: string;
  readonly policy: string;
  readonly window: string;
  /**
   * Units in the current bucket before → after (sliding windows also `previous`); a gcra window's
   * theoretical arrival time (epoch ms), which is never moved earlier.
   */
  readonly before: number;
  readonly after: number;
  readonly previousBefore?: number;
  readonly previousAfter?: number;
  /** False when Redis already held as much or more (it is never lowered). */
  readonly raised: boolean;
}

export interface ReseedResult {
  readonly now: string;
  readonly from: string;
  readonly windows: readonly ReseededWindow[];
  readonly recordsRead: number;
  /** Usage events that counted in at least one rebuilt window. */
  readonly eventsCounted: number;
  readonly invalid: number;
  readonly keys: readonly ReseededKey[];
  readonly raised: number;
  readonly unchanged: number;
}

/**
 * `tally reseed`: after a Redis loss, rebuilds the sustained counters from the usage ledger (see
 * ReseedAccumulator for what counts), then raises each window hash to at least that, one atomic
 * script per key. Run it with the decision API up: whatever it counted meanwhile is kept (max).
 */
export async function reseed(
  deps: { readonly ledger: Pick<Ledger, 'admin' | 'consumers'>; readonly redis: RedisClient },
  options: ReseedOptions,
): Promise<ReseedResult> {
  const set = await loadPolicySet(options.policiesFile);
  if (options.policy !== undefined && !set.policies.some((p) => p.name === options.policy)) {
    throw new OpsError(`no policy named ${options.policy} in ${options.policiesFile}`, true);
  }
  const nowMs = options.nowMs ?? (await redisNowMs(deps.redis));
  const windows = sustainedWindows(set, nowMs, options.policy);
  const oldest = Math.min(nowMs, ...windows.map((w) => w.sinceMs));
  const fromMs = options.fromMs ?? oldest;
  const accumulator = new ReseedAccumulator(windows, options.shards, fromMs);
  let invalid = 0;
  let read = 0;
  if (windows.length > 0) {
    const ranges = await planTopicRange(deps.ledger.admin, options.topic ?? TOPICS.usage, fromMs, 'latest');
    const meter = new ProgressMeter(rangeSize(ranges));
    const progress = throttled(options.onProgress);
    read = await readTopicRanges(
      deps.ledger.consumers,
      ranges,
      (_topic, _partition, records) => {
        for (const record of records) {
          if (record.value === null) continue;
          const parsed = parseUsageEvent(record.value);
          if (parsed.ok) accumulator.add(parsed.event);
          else invalid++;
        }
      },
      { purpose: 'reseed', onProgress: (n) => progress.report(() => meter.snapshot(n)) },
    );
    progress.final(meter.snapshot(read));
  }
  const keys = await writeTargets(deps.redis, accumulator.targets());
  return {
    now: new Date(nowMs).toISOString(),
    from: new Date(fromMs).toISOString(),
    windows: windows.map((w) => ({
      policy: w.policy.name,
      window: w.window.name,
      algorithm: w.window.algorithm,
      since: new Date(w.sinceMs).toISOString(),
      partial: fromMs > w.sinceMs,
    })),
    recordsRead: read,
    eventsCounted: accumulator.counted,
    invalid,
    keys,
    raised: keys.filter((k) => k.raised).length,
    unchanged: keys.filter((k) => !k.raised).length,
  };
}

async function writeTargets(redis: RedisClient, targets: readonly ReseedTarget[]): Promise<ReseededKey[]> {
  const write = reseedWriter(redis);
  const out: ReseededKey[] = [];
  for (let i = 0; i < targets.length; i += 200) {
    const chunk = targets.slice(i, i + 200);
    const replies = await Promise.all(chunk.map(write));
    chunk.forEach((t, j) => {
      const r = replies[j];
      out.push({
        key: t.key,
        policy: t.policy,
        window: t.window,
        before: r.before,
        after: r.after,
        ...(t.previousCounts ? { previousBefore: r.previousBefore, previousAfter: r.previousAfter } : {}),
        raised: r.written,
      });
    });
  }
  return out;
}
