import { type WindowSpec } from '@tally/policy';
import { type RlsUnit } from './rls.types';

const SECOND = 1000;
const UNIT_BY_PERIOD: ReadonlyMap<number, RlsUnit> = new Map([
  [SECOND, 'SECOND'],
  [60 * SECOND, 'MINUTE'],
  [3600 * SECOND, 'HOUR'],
  [86_400 * SECOND, 'DAY'],
]);

/**
 * Envoy's `RateLimit` says "N per unit"; a Tally window can say that only when its period is exactly
 * one unit (`1s`, `1m`, `1h`, `1d`) or it is a calendar month. Any other period (`10s`, `500ms`,
 * `31d`) has no honest unit, so the caller omits `current_limit` rather than report a wrong rate;
 * `limit_remaining` and `duration_until_reset` still describe the window.
 */
export function rateLimitUnitOf(window: Pick<WindowSpec, 'algorithm' | 'periodMs'>): RlsUnit | undefined {
  if (window.algorithm === 'calendar_month') return 'MONTH';
  return UNIT_BY_PERIOD.get(window.periodMs);
}
