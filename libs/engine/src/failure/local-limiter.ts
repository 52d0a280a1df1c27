import type { Algorithm } from '@tally/policy';
import { LocalLimiter, type LocalCheck as Check, type LocalLimiterOptions } from '@tally/window-math';
import { evaluateWindow } from '../algorithms/registry';

export { UNFIT_RETRY_AFTER_MS, type LocalLimiterOptions } from '@tally/window-math';

/** One policy's windows for one key (`id`: tenant, policy and key value). */
export type LocalCheck = Check<Algorithm>;

/**
 * The limiter behind `on_backend_failure: local_fallback`: @tally/window-math's bounded `LocalLimiter`
 * (its rules: share, deny commits nothing, bounded keys, overflow) with the engine's window maths,
 * `evaluateWindow`, all the algorithms decide.lua has, calendar months included. While Redis cannot
 * answer, each API process enforces the policy's windows on its own, at a share of every limit; the
 * clock is this host's instead of Redis's `TIME`.
 */
export class EngineLocalLimiter extends LocalLimiter<Algorithm> {
  constructor(options: LocalLimiterOptions) {
    super(options, evaluateWindow);
  }
}
