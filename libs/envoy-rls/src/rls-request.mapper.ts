import { type DecisionRequest } from '@tally/engine';
import { ATTRIBUTE_NAME, MAX_ATTRIBUTES, SELECTOR_DIMS } from '@tally/policy';
import { overrideWindow } from './rls-limit-override';
import { type RlsDescriptor, type RlsRequest } from './rls.types';

/**
 * Entries one descriptor may carry: each selector dim once, plus the attributes a decision may have.
 * A longer descriptor could never be a valid decision, so it is refused before anything is built.
 */
export const MAX_DESCRIPTOR_ENTRIES = SELECTOR_DIMS.length + MAX_ATTRIBUTES;
/** The attribute that carries the request's `domain`. */
export const DOMAIN_ATTRIBUTE = 'domain';

const DIMS: ReadonlySet<string> = new Set(SELECTOR_DIMS);

/** Caps an operator sets (`TALLY_GRPC_MAX_DESCRIPTORS`). */
export interface RlsRequestLimits {
  /** Descriptors per request; Envoy sends one per matching `rate_limits` entry, a handful. */
  readonly maxDescriptors: number;
}

export type RlsRequestMapping =
  | {
      readonly ok: true;
      /** One per descriptor, in order (the tenant scope is judged on all of them). */
      readonly requests: readonly DecisionRequest[];
      /**
       * Descriptors with a key no policy can name (not `[a-z0-9_.-]{1,64}`): no rule fits them, so
       * they are answered OK without a decision rather than refused as a bad attribute name.
       */
      readonly ruleless: ReadonlySet<number>;
    }
  /** The request cannot be read as decisions at all; `message` names the field, never a value. */
  | { readonly ok: false; readonly message: string };

/**
 * One Tally decision per descriptor, in order: entries keyed by a selector dim (`tenant`,
 * `principal`, `token`, `client`, `route`) are selectors, every other entry an attribute, and the
 * request's `domain` (required) the attribute `domain`. Policies match whole descriptors
 * (`wholeDescriptor`: a policy's `match` names ∪ `key` dims, `domain` aside, must be exactly the
 * descriptor's keys), so a descriptor no rule fits is answered OK and counted by none, as in
 * envoyproxy/ratelimit. Values are passed on untrusted: the engine normalizes
 * them and answers bad ones with its own codes (400), exactly as over HTTP.
 *
 * Cost: the descriptor's `hits_addend` when Envoy sets it (0 then reports state without spending),
 * else the request's `hits_addend`, where 0 means "unset" and so 1.
 *
 * A descriptor `limit` override becomes the decision's `windowOverride` (`overrideWindow`).
 *
 * A key that repeats within a descriptor (or an entry named `domain` beside a domain) is refused:
 * two values for one selector have no single identity, and picking one could let a request bypass
 * the counter of the other.
 *
 * The caps (`limits.maxDescriptors`, {@link MAX_DESCRIPTOR_ENTRIES}) are checked before any decision
 * is made, so a request over them consumes nothing.
 */
export function toDecisionRequests(request: RlsRequest, limits: RlsRequestLimits): RlsRequestMapping {
  const descriptors = request.descriptors ?? [];
  if (descriptors.length === 0) return invalid('descriptors: at least one descriptor is required');
  if (descriptors.length > limits.maxDescriptors)
    return invalid(`descriptors: at most ${limits.maxDescriptors} descriptors per request`);
  // Envoy's rules live under a domain; without one no rule could apply, and answering OK would let a
  // misconfigured filter pass everything (envoyproxy/ratelimit refuses it too).
  const domain = request.domain ?? '';
  if (domain === '') return invalid('domain: must not be empty');
  const requestCost = request.hits_addend || 1;
  const requests: DecisionRequest[] = [];
  const ruleless = new Set<number>();
  for (const [i, descriptor] of descriptors.entries()) {
    const mapped = toDecisionRequest(descriptor, `descriptors[${i}]`, domain, requestCost);
    if (!mapped.ok) return mapped;
    requests.push(mapped.request);
    if (mapped.ruleless) ruleless.add(i);
  }
  return { ok: true, requests, ruleless };
}

function toDecisionRequest(
  descriptor: RlsDescriptor,
  path: string,
  domain: string,
  requestCost: number,
): { ok: true; request: DecisionRequest; ruleless: boolean } | { ok: false; message: string } {
  const entries = descriptor.entries ?? [];
  if (entries.length === 0) return invalid(`${path}.entries: at least one entry is required`);
  if (entries.length > MAX_DESCRIPTOR_ENTRIES)
    return invalid(`${path}.entries: at most ${MAX_DESCRIPTOR_ENTRIES} entries per descriptor`);
  const selectors: Record<string, string> = {};
  const attributes: Record<string, string> = {};
  let ruleless = false;
  attributes[DOMAIN_ATTRIBUTE] = domain;
  for (const [j, entry] of entries.entries()) {
    const key = entry.key ?? '';
    if (key === '') return invalid(`${path}.entries[${j}].key: must not be empty`);
    const target = DIMS.has(key) ? selectors : attributes;
    if (Object.hasOwn(target, key)) {
      const why = key === DOMAIN_ATTRIBUTE ? 'the request domain' : 'an earlier entry';
      return invalid(`${path}.entries[${j}].key: "${key}" is already set by ${why}`);
    }
    target[key] = entry.value ?? '';
    if (target === attributes && !ATTRIBUTE_NAME.test(key)) ruleless = true;
  }
  const own = descriptor.hits_addend;
  const cost = own ? (own.value ?? 0) : requestCost;
  const override = overrideWindow(descriptor, path);
  if (!override.ok) return override;
  const request: DecisionRequest = { selectors, attributes, cost, wholeDescriptor: true };
  return {
    ok: true,
    request: override.window ? { ...request, windowOverride: override.window } : request,
    ruleless,
  };
}

function invalid(message: string): { ok: false; message: string } {
  return { ok: false, message };
}
