import { createHmac } from 'node:crypto';
import { SELECTOR_DIMS, type SelectorDim } from './policy.types';

/**
 * Boundary normalization of the caller's identity (DESIGN §2). Whatever a caller sends becomes either
 * clean, trimmed values or a `selector_identity_invalid` failure (400, fail closed): a value that
 * cannot be keyed safely must never turn into a bypass. The raw `token` is replaced by its HMAC here,
 * before any key, log, metric, event or response can see it.
 */

/** Selector values after normalization; `token` is already `t_<hmac>`. Dims appear in SELECTOR_DIMS order. */
export type NormalizedSelectors = Readonly<Partial<Record<SelectorDim, string>>>;
/** Attribute values after normalization; names in sorted order. */
export type NormalizedAttributes = Readonly<Record<string, string>>;

export interface SelectorFailure {
  readonly ok: false;
  readonly reason: 'selector_identity_invalid';
  /** Where the problem is: `selectors`, `selectors.tenant`, `attributes.plan`. Never contains a value. */
  readonly field: string;
  readonly message: string;
}

export const MAX_VALUE_BYTES = 256;
export const MAX_ATTRIBUTES = 32;
export const ATTRIBUTE_NAME = /^[a-z0-9_.-]{1,64}$/;
const TOKEN_HASH_CHARS = 22;
/** With the `u` flag a well-formed surrogate pair is one code point, so this finds only lone halves. */
const LONE_SURROGATE = /\p{Cs}/u;
const DIMS: readonly string[] = SELECTOR_DIMS;

/** C0, DEL and C1: exactly Unicode's control category. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Why an already trimmed value cannot be a selector or attribute value; `undefined` when it can. */
export function valueProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (hasControlCharacter(value)) return 'must not contain control characters';
  // Lone surrogates would be re-encoded as U+FFFD, so distinct inputs could share one counter.
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode';
  if (Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES)
    return `must be at most ${MAX_VALUE_BYTES} bytes (UTF-8)`;
  return undefined;
}

/** `t_` + base64url(HMAC-SHA256(secret, token)), 22 characters: stable per token, irreversible. */
export function hashToken(token: string, secret: string): string {
  return `t_${createHmac('sha256', secret).update(token, 'utf8').digest('base64url').slice(0, TOKEN_HASH_CHARS)}`;
}

function invalid(field: string, message: string): SelectorFailure {
  return { ok: false, reason: 'selector_identity_invalid', field, message };
}

/** A caller-chosen name is echoed only when it is plain; anything else could smuggle junk into logs. */
function fieldOf(section: string, name: string): string {
  return ATTRIBUTE_NAME.test(name) ? `${section}.${name}` : section;
}

function entriesOf(raw: unknown): [string, unknown][] | undefined {
  if (raw === undefined) return [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  return Object.entries(raw);
}

/** Absent selectors normalize to `{}`; a `key` dim then fails as missing, later, per policy. */
export function normalizeSelectors(
  raw: unknown,
  tokenSecret: string,
): { ok: true; selectors: NormalizedSelectors } | SelectorFailure {
  const entries = entriesOf(raw);
  if (!entries) return invalid('selectors', 'must be an object of string values');
  const clean = new Map<string, string>();
  for (const [name, value] of entries) {
    // The field is spelled only for a failure: most requests never need it.
    if (!DIMS.includes(name))
      return invalid(fieldOf('selectors', name), `unknown selector; must be one of ${DIMS.join(', ')}`);
    if (typeof value !== 'string') return invalid(fieldOf('selectors', name), 'must be a string');
    const trimmed = value.trim();
    const problem = valueProblem(trimmed);
    if (problem) return invalid(fieldOf('selectors', name), problem);
    clean.set(name, name === 'token' ? hashToken(trimmed, tokenSecret) : trimmed);
  }
  const selectors: Partial<Record<SelectorDim, string>> = {};
  for (const dim of SELECTOR_DIMS) {
    const value = clean.get(dim);
    if (value !== undefined) selectors[dim] = value;
  }
  return { ok: true, selectors: Object.freeze(selectors) };
}

/**
 * Free attributes for `match`/`unless`. A name that is a selector dim is refused so that a name in a
 * policy always means one thing.
 */
/** Most requests carry no attributes: one frozen answer for all of them instead of one each. */
const NO_ATTRIBUTES = Object.freeze({ ok: true, attributes: Object.freeze({}) } as const);

export function normalizeAttributes(
  raw: unknown,
): { ok: true; attributes: NormalizedAttributes } | SelectorFailure {
  const entries = entriesOf(raw);
  if (!entries) return invalid('attributes', 'must be an object of string values');
  if (entries.length === 0) return NO_ATTRIBUTES;
  if (entries.length > MAX_ATTRIBUTES)
    return invalid('attributes', `must have at most ${MAX_ATTRIBUTES} entries`);
  const clean: [string, string][] = [];
  for (const [name, value] of entries) {
    if (!ATTRIBUTE_NAME.test(name)) return invalid('attributes', 'names must match [a-z0-9_.-]{1,64}');
    const field = `attributes.${name}`;
    if (DIMS.includes(name)) return invalid(field, 'is a selector; send it in selectors');
    if (typeof value !== 'string') return invalid(field, 'must be a string');
    const trimmed = value.trim();
    const problem = valueProblem(trimmed);
    if (problem) return invalid(field, problem);
    clean.push([name, trimmed]);
  }
  clean.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // fromEntries defines own properties, so a `__proto__` attribute cannot reach the prototype.
  return { ok: true, attributes: Object.freeze(Object.fromEntries(clean)) };
}
