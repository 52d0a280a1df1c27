import { scaleBound } from './algorithm-rules';
import { parseDuration } from './duration';
import type { PolicyFileDto } from './policy-file.dto';
import { isMapping } from './policy-file.rules';
import { ALGORITHMS, type Algorithm, type PolicyError } from './policy.types';
import { ATTRIBUTE_NAME, valueProblem } from './selectors';

/**
 * The rules class-validator's per-field decorators cannot express: uniqueness across entries and the
 * contents of `match`/`unless`. They run on whatever parts of the file are well typed, so that one
 * pass reports everything.
 */
export function checkPolicies(file: PolicyFileDto): PolicyError[] {
  if (!Array.isArray(file.policies)) return [];
  const errors: PolicyError[] = [];
  const firstByName = new Map<string, number>();
  (file.policies as unknown[]).forEach((p, i) => {
    if (!isMapping(p)) return;
    const policy: Record<string, unknown> = p;
    const path = `policies[${i}]`;
    if (typeof policy.name === 'string') {
      const first = firstByName.get(policy.name);
      if (first === undefined) firstByName.set(policy.name, i);
      else
        errors.push({
          path: `${path}.name`,
          message: `duplicate policy name "${policy.name}" (first at policies[${first}])`,
        });
    }
    if (policy.local_fallback_overflow !== undefined && policy.on_backend_failure !== 'local_fallback')
      errors.push({
        path: `${path}.local_fallback_overflow`,
        message: 'only applies with on_backend_failure: local_fallback',
      });
    errors.push(...checkWindowNames(policy.windows, path));
    errors.push(...checkWindowScale(policy.windows, path));
    for (const field of ['match', 'unless', 'match_prefix', 'unless_prefix'] as const) {
      const spec = policy[field];
      if (isMapping(spec)) errors.push(...checkMatch(spec, `${path}.${field}`));
    }
  });
  return errors;
}

function checkWindowNames(windows: unknown, path: string): PolicyError[] {
  if (!Array.isArray(windows)) return [];
  const errors: PolicyError[] = [];
  const firstByName = new Map<string, number>();
  (windows as unknown[]).forEach((w, j) => {
    const name = isMapping(w) ? w.name : undefined;
    if (typeof name !== 'string') return;
    const first = firstByName.get(name);
    if (first === undefined) firstByName.set(name, j);
    else
      errors.push({
        path: `${path}.windows[${j}].name`,
        message: `duplicate window name "${name}" in this policy (first at windows[${first}])`,
      });
  });
  return errors;
}

/**
 * `limit × period` (and `burst × period`) within what the algorithm's maths holds exactly
 * (`ALGORITHM_RULES[…].scale`, algorithm-rules.ts).
 */
function checkWindowScale(windows: unknown, path: string): PolicyError[] {
  if (!Array.isArray(windows)) return [];
  const errors: PolicyError[] = [];
  (windows as unknown[]).forEach((w, j) => {
    if (!isMapping(w) || typeof w.period !== 'string') return;
    const algorithm = w.algorithm as Algorithm;
    if (!(ALGORITHMS as readonly unknown[]).includes(algorithm)) return;
    const periodMs = parseDuration(w.period);
    // Other problems of limit and period are reported by their own rules.
    if (periodMs === undefined) return;
    for (const field of ['limit', 'burst'] as const) {
      const value = w[field];
      const max = scaleBound(algorithm, field);
      if (max === undefined || typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
        continue;
      if (value * periodMs > max)
        errors.push({
          path: `${path}.windows[${j}].${field}`,
          message:
            `${field} × period in ms must be at most ${max} for ${algorithm} (here ${value} × ${periodMs}); ` +
            `lower the ${field} or the period`,
        });
    }
  });
  return errors;
}

const VALUE_RULE = 'must be 1..256 bytes without surrounding spaces or control characters';

/** Entries name a selector dim or an attribute; values must be ones a normalized request can carry. */
function checkMatch(spec: Record<string, unknown>, path: string): PolicyError[] {
  const errors: PolicyError[] = [];
  for (const [name, value] of Object.entries(spec)) {
    if (!ATTRIBUTE_NAME.test(name)) {
      errors.push({
        path: `${path}[${JSON.stringify(name)}]`,
        message: 'names must match [a-z0-9_.-]{1,64}',
      });
      continue;
    }
    const at = `${path}.${name}`;
    if (name === 'token') {
      errors.push({ path: at, message: 'cannot match on token: token values are hashed before matching' });
    } else if (typeof value === 'string') {
      if (!isValue(value)) errors.push({ path: at, message: VALUE_RULE });
    } else if (Array.isArray(value) && value.length > 0) {
      value.forEach((v, k) => {
        if (typeof v !== 'string')
          errors.push({ path: `${at}[${k}]`, message: 'must be a string (quote numbers and booleans)' });
        else if (!isValue(v)) errors.push({ path: `${at}[${k}]`, message: VALUE_RULE });
      });
    } else if (Array.isArray(value)) {
      errors.push({ path: at, message: 'must list at least one value' });
    } else {
      errors.push({
        path: at,
        message: 'must be a string or a list of strings (quote numbers and booleans)',
      });
    }
  }
  return errors;
}

/** A value the selector normalization could produce; anything else would silently never match. */
function isValue(v: string): boolean {
  return v === v.trim() && valueProblem(v) === undefined;
}
