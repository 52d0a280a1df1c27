import type { WindowParams, WindowResult, WindowState } from './window-state';

/**
 * The bounded in-process limiter, one copy for both of its users: the engine's `on_backend_failure:
 * local_fallback` (while Redis cannot answer) and the SDK's fail mode `local` (while Tally cannot).
 * Pure: no I/O, the time is an argument. Each process enforces the windows on its own, at a share of
 * every limit, with the window maths its user passes (`WindowEvaluator`: the engine's registry, the
 * mirror of decide.lua; the SDK's dispatch to this lib's algorithms). The clock is this host's.
 *
 * - **Share.** Each window allows `⌊limit / share⌋` here (`share` = how many processes enforce at once:
 *   TALLY_LOCAL_FALLBACK_SHARE, the SDK's `localFallback.share`), so N processes together never allow more than the limit. A share of 0
 *   (limit < N) denies every cost > 0.
 * - **Same rules as the script.** Every window of every check is evaluated first; a denial commits
 *   nothing anywhere (deny consumes nothing); a cost of 0 is a peek and stores nothing.
 * - **Bounded memory.** At most `maxKeys` keys (one per policy, tenant and key value) are held, in
 *   least-recently-used order. A new key takes the place of the least recently used one only once that
 *   one's windows no longer matter (past their TTL, as Redis would have expired them); evicting a key
 *   whose windows still count would hand it a fresh share, i.e. more than its limit. So while every
 *   held key still counts, a new key is **overflow** and the caller applies its overflow mode (the
 *   policy's `local_fallback_overflow`, the SDK's `localFallback.overflow`: allow uncounted or refuse),
 *   never silently unlimited.
 */

/** A window as the limiter takes it: named, its algorithm (for the evaluator), its full limit. */
export interface LocalWindow<A extends string = string> extends WindowParams {
  readonly name: string;
  readonly algorithm: A;
}

/** One window's maths at the share (`spec` carries the shared limit and burst); cost ≤ capacity. */
export type WindowEvaluator<A extends string> = (
  spec: WindowParams & { readonly algorithm: A },
  state: WindowState,
  nowMs: number,
  cost: number,
) => WindowResult;

/** One policy's windows for one key: what must all allow. */
export interface LocalCheck<A extends string = string> {
  /** Identifies the counters: e.g. tenant, policy and key value (any string; equal ids share counters). */
  readonly id: string;
  /** The windows with their full limits; the share is taken here. */
  readonly windows: readonly LocalWindow<A>[];
}

export type LocalVerdict =
  /** Every window of every check allows; counted when cost > 0. `results[check][window]`. */
  | { readonly kind: 'allowed'; readonly results: readonly (readonly WindowResult[])[] }
  /** `check`/`window`: the denying window with the longest wait (the binding one). Nothing counted. */
  | {
      readonly kind: 'denied';
      readonly results: readonly (readonly WindowResult[])[];
      readonly check: number;
      readonly window: number;
    }
  /** Would be allowed, but the keys of `fresh` (check indexes) find no room: nothing counted. */
  | { readonly kind: 'overflow'; readonly fresh: readonly number[] };

export interface LocalLimiterOptions {
  /** Processes enforcing at once; each allows ⌊limit / share⌋. ≥ 1. */
  readonly share: number;
  /** Keys held at most. ≥ 1. */
  readonly maxKeys: number;
}

interface Entry {
  /** The windows' shape the states belong to: a policy reload that changes them starts afresh. */
  readonly shape: string;
  states: WindowState[];
  /** When every window's state stops mattering (the longest TTL after the last commit), epoch ms. */
  expiresAt: number;
}

/** The wait of a cost above the share: it never fits locally; the backend may answer again by then. */
export const UNFIT_RETRY_AFTER_MS = 1_000;

/** A full table looks for expired keys beyond the LRU head at most this often (a scan is O(maxKeys)). */
const SWEEP_INTERVAL_MS = 1_000;

export class LocalLimiter<A extends string = string> {
  /** Map iteration order is insertion order: re-inserting on use keeps the least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    readonly options: LocalLimiterOptions,
    private readonly evaluateWindow: WindowEvaluator<A>,
  ) {
    for (const [name, value] of Object.entries(options))
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be an integer ≥ 1`);
  }

  /** Keys held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The share of one window's limit this process enforces. */
  shareOf(limit: number): number {
    return Math.floor(limit / this.options.share);
  }

  decide(checks: readonly LocalCheck<A>[], cost: number, nowMs: number): LocalVerdict {
    const found = checks.map((c) => this.touch(c, nowMs));
    const results = checks.map((c, i) =>
      c.windows.map((w, j) => this.evaluate(w, found[i]?.states[j] ?? {}, nowMs, cost)),
    );
    const denied = longestDenial(results);
    if (denied !== undefined) return { kind: 'denied', results, ...denied };
    if (cost === 0) return { kind: 'allowed', results };

    const fresh = checks.flatMap((_, i) => (found[i] === undefined ? [i] : []));
    if (!this.makeRoom(fresh.length, nowMs)) return { kind: 'overflow', fresh };
    checks.forEach((c, i) => this.commit(c, results[i], nowMs));
    return { kind: 'allowed', results };
  }

  /**
   * The window maths at the share. A cost above the share can never fit here (the backend bounds costs
   * by the full limit, and the maths assumes cost ≤ limit): it is denied, its window reported as a peek
   * sees it, with a retry-after of `UNFIT_RETRY_AFTER_MS`, by when the backend may answer again.
   */
  private evaluate(window: LocalWindow<A>, state: WindowState, nowMs: number, cost: number): WindowResult {
    const spec = {
      algorithm: window.algorithm,
      limit: this.shareOf(window.limit),
      periodMs: window.periodMs,
      ...(window.burst !== undefined && { burst: this.shareOf(window.burst) }),
    };
    // The most one decision can take: the limit, or a gcra window's burst (@tally/policy's capacityOf).
    const capacity = spec.limit === 0 ? 0 : (spec.burst ?? spec.limit);
    if (cost <= capacity) return this.evaluateWindow(spec, state, nowMs, cost);
    const peek = capacity === 0 ? undefined : this.evaluateWindow(spec, state, nowMs, 0);
    return {
      allowed: false,
      remaining: peek?.remaining ?? 0,
      resetMs: peek?.resetMs ?? 0,
      retryAfterMs: UNFIT_RETRY_AFTER_MS,
      nextState: state,
      ttlMs: peek?.ttlMs ?? 0,
    };
  }

  /** The entry of a check, moved to the most recently used end; a stale shape counts as absent. */
  private touch(check: LocalCheck<A>, nowMs: number): Entry | undefined {
    const entry = this.entries.get(check.id);
    if (entry === undefined) return undefined;
    this.entries.delete(check.id);
    if (entry.shape !== shapeOf(check) || entry.expiresAt <= nowMs) return undefined;
    this.entries.set(check.id, entry);
    return entry;
  }

  private commit(check: LocalCheck<A>, results: readonly WindowResult[], nowMs: number): void {
    const existing = this.entries.get(check.id);
    const entry: Entry = existing ?? { shape: shapeOf(check), states: [], expiresAt: 0 };
    entry.states = results.map((r) => r.nextState);
    entry.expiresAt = Math.max(entry.expiresAt, ...results.map((r) => nowMs + r.ttlMs));
    if (existing === undefined) this.entries.set(check.id, entry);
  }

  /**
   * Room for `needed` new keys: evicts least recently used keys whose windows no longer matter, from
   * the head; when the head still matters, sweeps the whole table for expired keys (at most once per
   * `SWEEP_INTERVAL_MS`). False when there is still no room: the new keys overflow.
   */
  private makeRoom(needed: number, nowMs: number): boolean {
    const over = () => this.entries.size + needed - this.options.maxKeys;
    for (const [id, entry] of this.entries) {
      if (over() <= 0 || entry.expiresAt > nowMs) break;
      this.entries.delete(id);
    }
    if (over() > 0 && nowMs - this.lastSweepMs >= SWEEP_INTERVAL_MS) {
      this.lastSweepMs = nowMs;
      for (const [id, entry] of this.entries) if (entry.expiresAt <= nowMs) this.entries.delete(id);
    }
    return over() <= 0;
  }
}

function shapeOf(check: LocalCheck): string {
  return check.windows.map((w) => `${w.name}/${w.algorithm}/${w.periodMs}`).join(',');
}

/** Among denying windows, the one with the longest wait: retrying sooner would be pointless. */
function longestDenial(
  results: readonly (readonly WindowResult[])[],
): { check: number; window: number } | undefined {
  let best: { check: number; window: number; wait: number } | undefined;
  results.forEach((windows, check) =>
    windows.forEach((r, window) => {
      if (!r.allowed && (best === undefined || r.retryAfterMs > best.wait))
        best = { check, window, wait: r.retryAfterMs };
    }),
  );
  return best === undefined ? undefined : { check: best.check, window: best.window };
}
