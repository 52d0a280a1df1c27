import type { TallyLocalWindow } from './client.types';
import { evaluateLocalWindow, type LocalWindowResult, type LocalWindowState } from './local-window-math';

/**
 * The SDK's bounded local limiter, with the semantics of the server's `local_fallback` (libs/engine's
 * `LocalLimiter`): each key may spend ⌊limit / share⌋ per window; a denial commits nothing; at most
 * `maxKeys` keys are held, least recently used first out, and only once their windows no longer
 * matter: while every held key still counts, a new key is overflow (the caller's overflow mode
 * decides), never a fresh, silently larger quota.
 */
export type LocalVerdict =
  | { readonly kind: 'allowed'; readonly results: readonly LocalWindowResult[] }
  /** `binding`: the denying window with the longest wait. */
  | { readonly kind: 'denied'; readonly results: readonly LocalWindowResult[]; readonly binding: number }
  | { readonly kind: 'overflow' };

/** The wait of a cost above the share: it never fits locally; Tally may answer again by then. */
export const UNFIT_RETRY_AFTER_MS = 1_000;
const SWEEP_INTERVAL_MS = 1_000;

interface Entry {
  states: LocalWindowState[];
  expiresAt: number;
}

export class LocalLimiter {
  private readonly entries = new Map<string, Entry>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windows: readonly TallyLocalWindow[],
    private readonly share: number,
    private readonly maxKeys: number,
  ) {
    if (windows.length === 0) throw new Error('localFallback.windows must not be empty');
    for (const [name, value] of Object.entries({ share, maxKeys }))
      if (!Number.isSafeInteger(value) || value < 1)
        throw new Error(`localFallback.${name} must be an integer ≥ 1`);
    windows.forEach((w, i) => {
      if (
        !Number.isSafeInteger(w.limit) ||
        w.limit < 1 ||
        !Number.isSafeInteger(w.periodMs) ||
        w.periodMs < 1
      )
        throw new Error(`localFallback.windows[${i}]: limit and periodMs must be integers ≥ 1`);
      if ((w.algorithm === 'gcra') !== (w.burst !== undefined))
        throw new Error(`localFallback.windows[${i}]: burst is required for gcra, and only valid there`);
      if (w.burst !== undefined && (!Number.isSafeInteger(w.burst) || w.burst < 1))
        throw new Error(`localFallback.windows[${i}]: burst must be an integer ≥ 1`);
    });
  }

  /** Keys held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The share of a limit this process enforces. */
  shareOf(limit: number): number {
    return Math.floor(limit / this.share);
  }

  decide(key: string, cost: number, nowMs: number): LocalVerdict {
    let entry = this.entries.get(key);
    if (entry !== undefined) {
      // Re-inserted: Map order is insertion order, so the least recently used key comes first.
      this.entries.delete(key);
      if (entry.expiresAt > nowMs) this.entries.set(key, entry);
      else entry = undefined;
    }
    const results = this.windows.map((w, i) => this.evaluate(w, entry?.states[i] ?? {}, nowMs, cost));
    let binding = -1;
    results.forEach((r, i) => {
      if (!r.allowed && (binding < 0 || r.retryAfterMs > results[binding].retryAfterMs)) binding = i;
    });
    if (binding >= 0) return { kind: 'denied', results, binding };
    if (cost === 0) return { kind: 'allowed', results };
    if (entry === undefined) {
      if (!this.makeRoom(nowMs)) return { kind: 'overflow' };
      entry = { states: [], expiresAt: 0 };
      this.entries.set(key, entry);
    }
    entry.states = results.map((r) => r.nextState);
    entry.expiresAt = Math.max(entry.expiresAt, ...results.map((r) => nowMs + r.ttlMs));
    return { kind: 'allowed', results };
  }

  private evaluate(
    window: TallyLocalWindow,
    state: LocalWindowState,
    nowMs: number,
    cost: number,
  ): LocalWindowResult {
    const spec = {
      algorithm: window.algorithm,
      limit: this.shareOf(window.limit),
      periodMs: window.periodMs,
      ...(window.burst !== undefined && { burst: this.shareOf(window.burst) }),
    };
    // The most one decision can take: the limit, or a gcra window's burst.
    const capacity = spec.limit === 0 ? 0 : (spec.burst ?? spec.limit);
    if (cost <= capacity) return evaluateLocalWindow(spec, state, nowMs, cost);
    const peek = capacity === 0 ? undefined : evaluateLocalWindow(spec, state, nowMs, 0);
    return {
      allowed: false,
      remaining: peek?.remaining ?? 0,
      resetMs: peek?.resetMs ?? 0,
      retryAfterMs: UNFIT_RETRY_AFTER_MS,
      nextState: state,
      ttlMs: 0,
    };
  }

  /** Room for one more key: expired keys from the LRU head, else (once a second) a sweep of all. */
  private makeRoom(nowMs: number): boolean {
    for (const [key, entry] of this.entries) {
      if (this.entries.size < this.maxKeys || entry.expiresAt > nowMs) break;
      this.entries.delete(key);
    }
    if (this.entries.size >= this.maxKeys && nowMs - this.lastSweepMs >= SWEEP_INTERVAL_MS) {
      this.lastSweepMs = nowMs;
      for (const [key, entry] of this.entries) if (entry.expiresAt <= nowMs) this.entries.delete(key);
    }
    return this.entries.size < this.maxKeys;
  }
}
