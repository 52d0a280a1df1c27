import {
  fixedWindow,
  gcra,
  LocalLimiter,
  slidingWindow,
  tokenBucket,
  type WindowEvaluator,
} from '@tally/window-math';
import type { TallyLocalWindow } from './client.types';

/**
 * The SDK's bounded local limiter: @tally/window-math's `LocalLimiter`, the one the server's
 * `local_fallback` runs (each key may spend ⌊limit / share⌋ per window; a denial commits nothing; at
 * most `maxKeys` keys, least recently used first out, and only once their windows no longer matter:
 * while every held key still counts, a new key is overflow), with the server's window maths for the
 * algorithms the SDK offers. That lib is pure and ships inside this package, so the SDK still loads
 * no server code; test/integration/client-local-fallback.parity.test.ts holds it to the server's
 * script, decision by decision.
 */
export type LocalAlgorithm = TallyLocalWindow['algorithm'];

const evaluateLocalWindow: WindowEvaluator<LocalAlgorithm> = (spec, state, nowMs, cost) => {
  switch (spec.algorithm) {
    case 'fixed_window':
      return fixedWindow(spec, state, nowMs, cost);
    case 'sliding_window':
      return slidingWindow(spec, state, nowMs, cost);
    case 'token_bucket':
      return tokenBucket(spec, state, nowMs, cost);
    case 'gcra':
      return gcra(spec, state, nowMs, cost);
  }
};

/** The limiter of `localFallback`, its settings checked first (errors name the SDK's options). */
export function localLimiter(
  windows: readonly TallyLocalWindow[],
  share: number,
  maxKeys: number,
): LocalLimiter<LocalAlgorithm> {
  if (windows.length === 0) throw new Error('localFallback.windows must not be empty');
  for (const [name, value] of Object.entries({ share, maxKeys }))
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`localFallback.${name} must be an integer ≥ 1`);
  windows.forEach((w, i) => {
    if (!Number.isSafeInteger(w.limit) || w.limit < 1 || !Number.isSafeInteger(w.periodMs) || w.periodMs < 1)
      throw new Error(`localFallback.windows[${i}]: limit and periodMs must be integers ≥ 1`);
    if ((w.algorithm === 'gcra') !== (w.burst !== undefined))
      throw new Error(`localFallback.windows[${i}]: burst is required for gcra, and only valid there`);
    if (w.burst !== undefined && (!Number.isSafeInteger(w.burst) || w.burst < 1))
      throw new Error(`localFallback.windows[${i}]: burst must be an integer ≥ 1`);
  });
  return new LocalLimiter({ share, maxKeys }, evaluateLocalWindow);
}
