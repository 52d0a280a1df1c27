import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { MAX_PERIOD_MS, MIN_PERIOD_MS, parseDuration } from './duration';
import { ALGORITHM_RULES, type AlgorithmRules } from './algorithm-rules';
import { SELECTOR_DIMS, type Algorithm } from './policy.types';
import { ATTRIBUTE_NAME } from './selectors';

/**
 * The field rules of the policy file as class-validator decorators. One decorator per field (with
 * `stopAtFirstError`) so that each field reports one message, and an absent required field says
 * `is required` instead of a type complaint.
 */

/** Policy, window and group names end up in Redis keys, metric labels and events: keep them plain. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
export const NAME_RULE = 'must match [a-z0-9][a-z0-9_.-]{0,63}';
export const PERIOD_RULE = 'must be a duration between 1ms and 31d (e.g. 500ms, 1s, 1m, 1h, 1d)';
/** The only period a calendar month window accepts; it may also be omitted. */
export const MONTH_PERIOD = '1mo';
/** How a window's algorithm takes its duration (algorithm-rules.ts); undefined for an unknown algorithm. */
function durationOf(window: object): AlgorithmRules['duration'] | undefined {
  const algorithm = (window as { algorithm?: unknown }).algorithm;
  return typeof algorithm === 'string' && Object.hasOwn(ALGORITHM_RULES, algorithm)
    ? ALGORITHM_RULES[algorithm as Algorithm].duration
    : undefined;
}

type Check = (value: unknown, args: ValidationArguments) => boolean;
type Message = string | ((value: unknown, args: ValidationArguments) => string);

function rule(name: string, check: Check, message: Message, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => check(value, args as ValidationArguments),
        defaultMessage: (args?: ValidationArguments) => {
          const a = args as ValidationArguments;
          if (a.value === undefined) return 'is required';
          return typeof message === 'string' ? message : message(a.value, a);
        },
      },
    },
    options,
  );
}

export const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function IsName(): PropertyDecorator {
  return rule('isName', (v) => typeof v === 'string' && NAME_PATTERN.test(v), NAME_RULE);
}

export function IsOneOf(values: readonly string[]): PropertyDecorator {
  return rule(
    'isOneOf',
    (v) => typeof v === 'string' && values.includes(v),
    `must be one of ${values.join(', ')}`,
  );
}

export function IsPositiveInteger(): PropertyDecorator {
  return rule(
    'isPositiveInteger',
    (v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0,
    // Past 2^53 − 1 a number is no longer the one written (YAML and JSON readers round it).
    'must be a positive integer, at most 9007199254740991',
  );
}

export function IsBool(): PropertyDecorator {
  return rule('isBool', (v) => typeof v === 'boolean', 'must be true or false');
}

export function IsMapping(): PropertyDecorator {
  return rule('isMapping', isMapping, 'must be a mapping of names to a value or a list of values');
}

export function IsList(what: string, options: { nonEmpty: boolean }): PropertyDecorator {
  return rule(
    'isList',
    (v) => Array.isArray(v) && (!options.nonEmpty || v.length > 0),
    options.nonEmpty ? `must be a non-empty list of ${what}` : `must be a list of ${what}`,
  );
}

/**
 * `key`: an ordered list of distinct names (may be empty: one counter for everyone), each a selector
 * dim or an attribute name (`[a-z0-9_.-]{1,64}`): a counter per value of each.
 */
export function IsKeyDims(): PropertyDecorator {
  const dims: readonly string[] = SELECTOR_DIMS;
  const what = `selector dims (${dims.join(', ')}) or attribute names ([a-z0-9_.-]{1,64})`;
  const problem = (v: unknown): string | undefined => {
    if (!Array.isArray(v)) return `must be a list of ${what}`;
    const unknown = v.filter((d) => typeof d !== 'string' || !ATTRIBUTE_NAME.test(d));
    if (unknown.length > 0) {
      return `unknown dim ${unknown.map((d) => JSON.stringify(d)).join(', ')}; must be ${what}`;
    }
    if (new Set(v).size !== v.length) return 'must not repeat a dim';
    return undefined;
  };
  return rule(
    'isKeyDims',
    (v) => problem(v) === undefined,
    (v) => problem(v) ?? '',
  );
}

/**
 * `period`: a duration in range, except for `calendar_month`, whose windows follow the calendar
 * and accept only `1mo` or no period at all.
 */
export function IsPeriod(): PropertyDecorator {
  const problem = (v: unknown, window: object): string | undefined => {
    const duration = durationOf(window);
    if (duration === 'lease_ttl') {
      return v === undefined ? undefined : 'must be omitted for concurrency (its leases last lease_ttl)';
    }
    if (duration === 'month') {
      return v === undefined || v === MONTH_PERIOD
        ? undefined
        : 'must be 1mo (or omitted) for calendar_month';
    }
    if (v === undefined) return 'is required';
    if (v === MONTH_PERIOD) return '1mo is only valid with algorithm calendar_month';
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    return ms !== undefined && ms >= MIN_PERIOD_MS && ms <= MAX_PERIOD_MS ? undefined : PERIOD_RULE;
  };
  return ValidateBy({
    name: 'isPeriod',
    validator: {
      validate: (v: unknown, args?: ValidationArguments) => problem(v, args?.object ?? {}) === undefined,
      defaultMessage: (args?: ValidationArguments) => problem(args?.value, args?.object ?? {}) ?? '',
    },
  });
}

/**
 * `burst`: required by an algorithm whose rules take one (`gcra`: how many units may pass at once),
 * refused on every other window.
 */
export function IsBurst(): PropertyDecorator {
  const problem = (v: unknown, window: object): string | undefined => {
    const algorithm = (window as { algorithm?: unknown }).algorithm;
    const takes =
      typeof algorithm === 'string' &&
      Object.hasOwn(ALGORITHM_RULES, algorithm) &&
      ALGORITHM_RULES[algorithm as Algorithm].burst === true;
    if (!takes) return v === undefined ? undefined : 'is only valid with algorithm gcra';
    if (v === undefined) return `is required for ${algorithm}`;
    return typeof v === 'number' && Number.isSafeInteger(v) && v > 0
      ? undefined
      : 'must be a positive integer, at most 9007199254740991';
  };
  return ValidateBy({
    name: 'isBurst',
    validator: {
      validate: (v: unknown, args?: ValidationArguments) => problem(v, args?.object ?? {}) === undefined,
      defaultMessage: (args?: ValidationArguments) => problem(args?.value, args?.object ?? {}) ?? '',
    },
  });
}

export const LEASE_TTL_RULE = 'must be a duration between 1ms and 31d (e.g. 30s, 5m)';

/**
 * `lease_ttl`: required by a `concurrency` window (a lease nobody releases must end by itself, or a
 * crashed caller would hold its units forever) and meaningless, so refused, on every other window.
 */
export function IsLeaseTtl(): PropertyDecorator {
  const problem = (v: unknown, window: object): string | undefined => {
    if (durationOf(window) !== 'lease_ttl') {
      return v === undefined ? undefined : 'is only valid with algorithm concurrency';
    }
    if (v === undefined) return 'is required for concurrency';
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    return ms !== undefined && ms >= MIN_PERIOD_MS && ms <= MAX_PERIOD_MS ? undefined : LEASE_TTL_RULE;
  };
  return ValidateBy({
    name: 'isLeaseTtl',
    validator: {
      validate: (v: unknown, args?: ValidationArguments) => problem(v, args?.object ?? {}) === undefined,
      defaultMessage: (args?: ValidationArguments) => problem(args?.value, args?.object ?? {}) ?? '',
    },
  });
}
