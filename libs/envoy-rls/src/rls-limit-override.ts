import { type WindowSpec } from '@tally/policy';
import { type RlsDescriptor, type RlsUnit } from './rls.types';

const SECOND = 1000;
/** A calendar month's nominal period; the engine aligns `calendar_month` windows to UTC months. */
const MONTH_MS = 31 * 86_400 * SECOND;
const PERIOD_OF: Readonly<Partial<Record<RlsUnit, number>>> = {
  SECOND,
  MINUTE: 60 * SECOND,
  HOUR: 3600 * SECOND,
  DAY: 86_400 * SECOND,
  MONTH: MONTH_MS,
};
/** `RateLimitResponse.RateLimit.Unit` by its number, for a loader that hands enums over as numbers. */
const UNIT_BY_NUMBER: readonly RlsUnit[] = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR'];
const PREFIX = 'envoy_override_';

export type OverrideMapping =
  | { readonly ok: true; readonly window: WindowSpec | undefined }
  | { readonly ok: false; readonly message: string };

/**
 * Envoy's descriptor `limit` (`RateLimitOverride`: "`requests_per_unit` per `unit` instead of the
 * configured limit") as the one window that replaces the applicable policies' windows: a fixed window
 * of that unit (`calendar_month` for MONTH), named per unit so that each unit has its own counter and
 * every override of one unit shares it, whatever its number — as the peer keys its counters.
 * `YEAR` is past Tally's longest period (31d), and `requests_per_unit` 0 or an `UNKNOWN` unit is no
 * limit at all: both are refused rather than guessed.
 */
export function overrideWindow(descriptor: RlsDescriptor, path: string): OverrideMapping {
  const limit = descriptor.limit;
  if (!limit) return { ok: true, window: undefined };
  const perUnit = limit.requests_per_unit ?? 0;
  if (!Number.isSafeInteger(perUnit) || perUnit < 1)
    return { ok: false, message: `${path}.limit.requests_per_unit: must be at least 1` };
  const unit = typeof limit.unit === 'number' ? UNIT_BY_NUMBER[limit.unit] : limit.unit;
  const periodMs = unit === undefined ? undefined : PERIOD_OF[unit as RlsUnit];
  if (periodMs === undefined)
    return { ok: false, message: `${path}.limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH` };
  return {
    ok: true,
    window: {
      name: `${PREFIX}${(unit as string).toLowerCase()}`,
      role: 'sustained',
      algorithm: unit === 'MONTH' ? 'calendar_month' : 'fixed_window',
      limit: perUnit,
      periodMs,
    },
  };
}

/** The spec of an override window by its name (the response reports its unit); else `undefined`. */
export function overrideWindowSpec(name: string): Pick<WindowSpec, 'algorithm' | 'periodMs'> | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const unit = name.slice(PREFIX.length).toUpperCase() as RlsUnit;
  const periodMs = PERIOD_OF[unit];
  if (periodMs === undefined) return undefined;
  return { algorithm: unit === 'MONTH' ? 'calendar_month' : 'fixed_window', periodMs };
}
