import type { MatchSpec, Policy, PolicySet, SelectorDim } from './policy.types';
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
 */
export function selectPolicies(
  set: PolicySet,
  selectors: NormalizedSelectors,
  attributes: NormalizedAttributes,
): Policy[] {
  const claimed = new Set<string>();
  const applicable: Policy[] = [];
  for (const policy of set.policies) {
    if (!policy.enabled || !applies(policy, selectors, attributes)) continue;
    if (policy.group !== undefined) {
      if (claimed.has(policy.group)) continue;
      if (policy.mode === 'enforce') claimed.add(policy.group);
    }
    applicable.push(policy);
  }
  return applicable;
}

function applies(policy: Policy, selectors: NormalizedSelectors, attributes: NormalizedAttributes): boolean {
  if (!holds(policy.match, selectors, attributes)) return false;
  // An empty `unless` exempts nobody (while an empty `match` selects everybody).
  return Object.keys(policy.unless).length === 0 || !holds(policy.unless, selectors, attributes);
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
 * `%`, `:`, `{` and `}` are percent-encoded in each value so that the join is unambiguous and a value
 * can never open a second Redis hash tag. An empty `key` gives `''` (one counter for everyone).
 */
export function keyOf(
  policy: Policy,
  selectors: NormalizedSelectors,
): { ok: true; value: string } | { ok: false; missing: SelectorDim } {
  const parts: string[] = [];
  for (const dim of policy.key) {
    const value = selectors[dim];
    if (value === undefined) return { ok: false, missing: dim };
    parts.push(encodeKeyPart(value));
  }
  return { ok: true, value: parts.join(':') };
}

const KEY_SPECIALS = /[%:{}]/g;
function encodeKeyPart(value: string): string {
  return value.replace(KEY_SPECIALS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
