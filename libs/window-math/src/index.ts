/**
 * @tally/window-math — the window algorithms and the bounded local limiter, in pure TypeScript: one
 * copy for the engine (its registry, `tally simulate`, the `local_fallback` limiter) and for the SDK
 * (fail mode `local`), which ships this lib inside its package. So it imports nothing: no other lib,
 * no package, no Node API.
 *
 * Does NOT own:
 * - which algorithms exist and their policy rules (libs/policy), nor the dispatch by algorithm (the
 *   engine's registry; the SDK's `evaluateLocalWindow`);
 * - the Lua the maths mirrors, calendar months, concurrency's leases (libs/engine);
 * - the decision a local verdict becomes (libs/engine's local fallback, the SDK's `LocalFallback`).
 */
export type { WindowParams, WindowResult, WindowState } from './window-state';
export { counter, fixedWindow, slidingWindow, tokenBucket } from './windows';
export { gcra } from './gcra';
export {
  LocalLimiter,
  UNFIT_RETRY_AFTER_MS,
  type LocalCheck,
  type LocalLimiterOptions,
  type LocalVerdict,
  type LocalWindow,
  type WindowEvaluator,
} from './local-limiter';
