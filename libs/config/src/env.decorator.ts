import { tryDurationMs } from './duration';

/** How the raw string of a variable becomes the typed value that class-validator then checks. */
export type EnvKind = 'string' | 'int' | 'int-or-auto' | 'list' | 'duration' | 'decimal';

export interface EnvBinding {
  readonly variable: string;
  readonly property: string;
  readonly kind: EnvKind;
  /** Raw default used when the variable is unset or blank; none = the setting has no default. */
  readonly default?: string;
  /** Never echo the value in an error: say how long it was instead. */
  readonly secret: boolean;
}

const bindings = new Map<object, EnvBinding[]>();

/** Binds a config property to its environment variable (the name operators see in errors). */
export function Env(
  variable: string,
  options: { kind: EnvKind; default?: string; secret?: boolean },
): PropertyDecorator {
  return (target, property) => {
    const list = bindings.get(target.constructor) ?? [];
    list.push({
      variable,
      property: String(property),
      kind: options.kind,
      default: options.default,
      secret: options.secret ?? false,
    });
    bindings.set(target.constructor, list);
  };
}

/** The bindings of a config class, in declaration order. */
export function envBindings(type: abstract new () => object): readonly EnvBinding[] {
  return bindings.get(type) ?? [];
}

/**
 * Unparseable numbers and durations become NaN, a value the validators reject,
 * so that class-validator reports every problem in one pass instead of the parser stopping early.
 */
export function convert(kind: EnvKind, raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  switch (kind) {
    case 'string':
      return raw;
    case 'int':
      return /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
    case 'int-or-auto':
      return raw === 'auto' ? raw : convert('int', raw);
    case 'list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'duration':
      return tryDurationMs(raw) ?? Number.NaN;
    case 'decimal':
      return /^\d{1,6}(\.\d{1,9})?$/.test(raw) ? Number(raw) : Number.NaN;
  }
}
