import { scaleBound, valueProblem, type Policy, type PolicySet } from '@tally/policy';
import type { OverrideChange, OverrideTarget } from './override.types';

/**
 * Pure validation of the admin API's override input against the policy set in force: which policy,
 * whether the key fits its key dims, whose tenant it is, and the limits, expiry and reason. Every
 * problem is returned at once, each with the field it is about (`policy`, `key`, `tenant`,
 * `limits.<window>`, `expires_at`, `reason`), for a 400 `request.invalid`.
 */

export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldProblem[] };

/** The key of a policy whose `key` is `[]` (one counter per tenant) in a URL, where '' cannot be a segment. */
export const EMPTY_KEY = '-';
export const MAX_REASON_LENGTH = 500;
const TOKEN_HASH = /^t_[A-Za-z0-9_-]{22}$/;
const ESCAPES = /%(25|3A|7B|7D)/g;
const SPECIALS = /[%:{}]/g;

const decodePart = (part: string) =>
  part.replace(ESCAPES, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
const encodePart = (value: string) =>
  value.replace(SPECIALS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `key` must be exactly what the policy's `keyOf` builds: one percent-encoded value per key dim,
 * joined by ':' (`-` for a policy without key dims). A `token` dim holds the token's hash (`t_…`,
 * as in events and responses), never a token. The tenant comes from the key when the policy's key
 * has `tenant` (a `tenant` parameter must then agree), else from the `tenant` parameter, required:
 * counters are per tenant, so an override without one would change nobody's.
 */
export function checkTarget(
  set: PolicySet,
  policyName: string,
  key: string,
  tenantParam: string | undefined,
): Checked<OverrideTarget & { readonly policySpec: Policy }> {
  const policy = set.policies.find((p) => p.name === policyName);
  if (policy === undefined) return fail('policy', 'no policy of that name in the policy set in force');
  const errors: FieldProblem[] = [];
  let tenant: string | null = null;
  const parts = policy.key.length === 0 ? (key === EMPTY_KEY ? [] : null) : key.split(':');
  if (parts === null || parts.length !== policy.key.length) {
    const dims = policy.key.length === 0 ? `'${EMPTY_KEY}' (no key dims)` : policy.key.join(':');
    errors.push({ path: 'key', message: `must be ${dims}, as policy ${policy.name} builds its key` });
  } else {
    parts.forEach((part, i) => {
      const dim = policy.key[i];
      const value = decodePart(part);
      const problem =
        encodePart(value) !== part
          ? "must be percent-encoded as the engine does: '%', ':', '{', '}' as %25, %3A, %7B, %7D"
          : dim === 'token'
            ? TOKEN_HASH.test(value)
              ? null
              : "must be the token's hash (t_ and 22 characters), never a token"
            : value.trim() !== value
              ? 'must not have surrounding spaces'
              : valueProblem(value);
      if (problem) errors.push({ path: `key`, message: `${dim} (part ${i + 1}) ${problem}` });
      else if (dim === 'tenant') tenant = value;
    });
  }
  const tenantIndex = policy.key.indexOf('tenant');
  if (tenantIndex >= 0) {
    if (tenantParam !== undefined && errors.length === 0 && tenantParam !== tenant)
      errors.push({ path: 'tenant', message: 'must be the tenant of the key, or absent' });
  } else if (tenantParam === undefined) {
    errors.push({
      path: 'tenant',
      message: `is required: policy ${policy.name} has no tenant in its key, and counters are per tenant`,
    });
  } else {
    const problem = valueProblem(tenantParam);
    if (problem || tenantParam.trim() !== tenantParam)
      errors.push({ path: 'tenant', message: problem ?? 'must not have surrounding spaces' });
    tenant = tenantParam;
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: { policy: policy.name, key: parts?.length === 0 ? '' : key, tenant, policySpec: policy },
  };
}

/** The PUT body, already shape-checked by the contract's schema; `nowMs` judges the expiry. */
export interface OverrideBody {
  readonly limits: Readonly<Record<string, unknown>>;
  readonly expires_at?: string;
  readonly reason: string;
}

export function checkChange(
  policy: Policy,
  body: OverrideBody,
  setBy: string,
  nowMs: number,
): Checked<OverrideChange> {
  const errors: FieldProblem[] = [];
  const names = Object.keys(body.limits);
  if (names.length === 0) errors.push({ path: 'limits', message: 'must name at least one window' });
  const limits: Record<string, number> = {};
  for (const name of names) {
    const path = `limits.${name}`;
    const window = policy.windows.find((w) => w.name === name);
    const limit = body.limits[name];
    if (window === undefined) {
      const known = policy.windows.map((w) => w.name).join(', ');
      errors.push({ path, message: `policy ${policy.name} has no such window (it has ${known})` });
    } else if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
      errors.push({ path, message: 'must be a whole number ≥ 0 (0 blocks the key)' });
    } else {
      // As the policy file: within what the algorithm's maths holds exactly (ALGORITHM_RULES).
      const max = scaleBound(window.algorithm, 'limit');
      if (max !== undefined && limit * window.periodMs > max)
        errors.push({ path, message: `limit × period in ms must be at most ${max} for ${window.algorithm}` });
      else limits[name] = limit;
    }
  }
  let expiresAtMs: number | null = null;
  if (body.expires_at !== undefined) {
    const ms = parseRfc3339(body.expires_at);
    if (ms === null)
      errors.push({ path: 'expires_at', message: 'must be an RFC 3339 date-time with a zone' });
    else if (ms <= nowMs) errors.push({ path: 'expires_at', message: 'must be in the future' });
    else expiresAtMs = ms;
  }
  const reason = body.reason.trim();
  if (reason === '' || reason.length > MAX_REASON_LENGTH || hasControl(reason))
    errors.push({
      path: 'reason',
      message: `must be 1..${MAX_REASON_LENGTH} characters without control characters`,
    });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { limits, expiresAtMs, reason, setBy } };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch ms of an RFC 3339 date-time (a zone required), or null. */
export function parseRfc3339(text: string): number | null {
  if (!RFC3339.test(text)) return null;
  const ms = Date.parse(text.toUpperCase());
  return Number.isFinite(ms) ? ms : null;
}

/** C0, DEL and C1 control characters: a reason is shown in consoles and logs as one line. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

function fail<T>(path: string, message: string): Checked<T> {
  return { ok: false, errors: [{ path, message }] };
}
