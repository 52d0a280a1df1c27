import { SELECTOR_DIMS, type MatchSpec, type Policy, type PolicySet, type SelectorDim } from './policy.types';
import type { NormalizedAttributes, NormalizedSelectors } from './selectors';

/**
 * Which policies apply to a request (DESIGN §2). Pure: the engine calls it per decision.
 *
 * - Every enabled policy whose `match` holds and whose `unless` does not apply (AND).
 * - In a `group`, the first enabled applicable policy in file order claims the request; the rest of
 *   the group is skipped. A disabled policy never claims, so the request falls through to the next
 *   one: turning a throttle off never leaves traffic uncounted.
 * - A shadow policy applies where it matches but never claims its group: trialling a rule in shadow
 *   must not switch off the enforced policy it is meant to replace.
 * - `whole` (Envoy RLS descriptors, docs/envoy.md "Matching"): a policy applies only when the names
 *   it uses — its `match` and `match_prefix` names and its `key` dims, `domain` aside — are exactly the names the request
 *   carries, `domain` aside. Envoy's rules match whole descriptors: a descriptor with an entry more
 *   or less than a rule is not that rule's, and is answered OK without being counted by it.
 */
export function selectPolicies(
  set: PolicySet,
  selectors: NormalizedSelectors,
  attributes: NormalizedAttributes,
  whole = false,
): Policy[] {
  // Made on the first grouped policy only: most policy sets have no group.
  let claimed: Set<string> | undefined;
  const applicable: Policy[] = [];
  const names = whole ? namesOf(selectors, attributes) : undefined;
  for (const policy of set.policies) {
    if (!policy.enabled || !applies(policy, selectors, attributes)) continue;
    if (names !== undefined && !usesExactly(policy, names)) continue;
    if (policy.group !== undefined) {
      if (claimed?.has(policy.group) === true) continue;
      if (policy.mode === 'enforce') (claimed ??= new Set()).add(policy.group);
    }
    applicable.push(policy);
  }
  return applicable;
}

function applies(policy: Policy, selectors: NormalizedSelectors, attributes: NormalizedAttributes): boolean {
  const { matchPrefix, unlessPrefix } = policy;
  if (matchPrefix === undefined) {
    if (!holds(policy.match, selectors, attributes)) return false;
  } else if (!holdsWithPrefixes(policy.match, matchPrefix, selectors, attributes)) return false;
  // An empty `unless` exempts nobody (while an empty `match` selects everybody).
  if (unlessPrefix === undefined)
    return isEmpty(policy.unless) || !holds(policy.unless, selectors, attributes);
  const exempts = !isEmpty(policy.unless) || !isEmpty(unlessPrefix);
  return !exempts || !holdsWithPrefixes(policy.unless, unlessPrefix, selectors, attributes);
}

/**
 * `holds` where a name may also be satisfied by a value prefix (Envoy's `prefix*` wildcard): every
 * name of either spec has a value that is one of its exact values or starts with one of its prefixes.
 * An empty pair holds (vacuously): the caller keeps an empty `unless` from exempting everybody.
 */
function holdsWithPrefixes(
  exact: MatchSpec,
  prefixes: MatchSpec,
  selectors: NormalizedSelectors,
  attributes: NormalizedAttributes,
): boolean {
  const names = new Set([...Object.keys(exact), ...Object.keys(prefixes)]);
  for (const name of names) {
    const value = lookup(name, selectors, attributes);
    if (value === undefined) return false;
    const byValue = Object.hasOwn(exact, name) && exact[name].includes(value);
    if (!byValue && !(Object.hasOwn(prefixes, name) && prefixes[name].some((p) => value.startsWith(p))))
      return false;
  }
  return true;
}

/** The attribute Envoy's request-level `domain` arrives as: matched like any name, never part of the shape. */
const DOMAIN = 'domain';

function namesOf(selectors: NormalizedSelectors, attributes: NormalizedAttributes): Set<string> {
  const names = new Set([...Object.keys(selectors), ...Object.keys(attributes)]);
  names.delete(DOMAIN);
  return names;
}

/** The policy's `match` (and `match_prefix`) names ∪ `key` dims, `domain` aside, equal `names` as a set. */
function usesExactly(policy: Policy, names: ReadonlySet<string>): boolean {
  // Counted in place (this runs per policy per Envoy descriptor): each distinct used name must be
  // among `names`, and there must be as many of them as `names` has.
  let used = 0;
  const { match, key, matchPrefix } = policy;
  for (const name of Object.keys(match)) {
    if (name === DOMAIN) continue;
    if (!names.has(name)) return false;
    used++;
  }
  for (let i = 0; i < key.length; i++) {
    const dim = key[i];
    // counted once: a dim that is also matched, or repeated in `key`, is already in (a dim is never `domain`)
    if (Object.hasOwn(match, dim) || key.indexOf(dim) < i) continue;
    if (!names.has(dim)) return false;
    used++;
  }
  if (matchPrefix !== undefined)
    for (const name of Object.keys(matchPrefix)) {
      if (name === DOMAIN || Object.hasOwn(match, name) || key.includes(name)) continue;
      if (!names.has(name)) return false;
      used++;
    }
  return used === names.size;
}

/** An object without own enumerable properties, without allocating its list of keys. */
function isEmpty(spec: MatchSpec): boolean {
  for (const name in spec) if (Object.hasOwn(spec, name)) return false;
  return true;
}

/** Every named entry has a value among the accepted ones; a name matches a selector dim or an attribute. */
function holds(spec: MatchSpec, selectors: NormalizedSelectors, attributes: NormalizedAttributes): boolean {
  for (const name of Object.keys(spec)) {
    const value = lookup(name, selectors, attributes);
    if (value === undefined || !spec[name].includes(value)) return false;
  }
  return true;
}

function lookup(
  name: string,
  selectors: NormalizedSelectors,
  attributes: NormalizedAttributes,
): string | undefined {
  // hasOwn: a policy naming `constructor` must not find Object.prototype's.
  if (Object.hasOwn(selectors, name)) return selectors[name as SelectorDim];
  if (Object.hasOwn(attributes, name)) return attributes[name];
  return undefined;
}

/**
 * The composite key of a policy for a request: the `key` dims' values in order, joined with `:`.
 * A dim is a selector when it names one (`tenant`, `principal`, `token`, `client`, `route`), else an
 * attribute: so an RLS descriptor keys a counter by its own entries, whatever their names.
 * `%`, `:`, `{` and `}` are percent-encoded in each value so that the join is unambiguous and a value
 * can never open a second Redis hash tag. An empty `key` gives `''` (one counter for everyone).
 */
export function keyOf(
  policy: Policy,
  selectors: NormalizedSelectors,
  attributes: NormalizedAttributes = {},
): { ok: true; value: string } | { ok: false; missing: string } {
  const parts: string[] = [];
  for (const dim of policy.key) {
    const value = DIM_NAMES.has(dim) ? selectors[dim as SelectorDim] : ownAttribute(attributes, dim);
    if (value === undefined) return { ok: false, missing: dim };
    parts.push(encodeKeyPart(value));
  }
  return { ok: true, value: parts.join(':') };
}

const DIM_NAMES: ReadonlySet<string> = new Set(SELECTOR_DIMS);
const ownAttribute = (attributes: NormalizedAttributes, name: string): string | undefined =>
  Object.hasOwn(attributes, name) ? attributes[name] : undefined;

const KEY_SPECIALS = /[%:{}]/g;
function encodeKeyPart(value: string): string {
  return value.replace(KEY_SPECIALS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
