import { createHash } from 'node:crypto';
import { denialTag, payloadJson } from '@tally/events';
import { planLease, type PlannedLease } from '../leases/lease-plan';
import {
  capacityOf,
  keyOf,
  normalizeAttributes,
  normalizeSelectors,
  selectPolicies,
  SELECTOR_DIMS,
  type NormalizedAttributes,
  type NormalizedSelectors,
  type Policy,
  type PolicySet,
  type WindowSpec,
} from '@tally/policy';
import type { DecisionCode, DecisionRequest } from './decision.types';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from './idempotency-key';
import {
  encodeScope,
  idempotencyKey,
  overrideField,
  overridesKey,
  policyStateKey,
  shardKeys,
  shardOf,
  windowKey,
  type ShardKeys,
} from '../store/keys';

export type { PlannedLease } from '../leases/lease-plan';

/**
 * Step one of a decision, pure: from the raw request and the policy set to everything the script
 * needs, or the 4xx refusal. Order (DESIGN §3): selectors → policies → keys → cost → idempotency key.
 * Nothing here touches Redis, so every refusal consumes nothing.
 */

export interface PlannedWindow {
  readonly policy: Policy;
  readonly name: string;
  readonly role: Policy['windows'][number]['role'];
  readonly algorithm: Policy['windows'][number]['algorithm'];
  /** `gcra` only: how many units may pass at once (its piece's `param`). */
  readonly burst?: number;
  readonly limit: number;
  readonly periodMs: number;
  /**
   * The window's state: its policy key's hash for a rate window (`policyStateKey`, shared by every
   * rate window of the policy key, one field each), its own sorted set for a concurrency window.
   */
  readonly redisKey: string;
  /** 0 = enforce; k > 0 = the k-th shadow policy of the decision (a shadow policy commits all-or-nothing). */
  readonly mode: number;
  /** `<policy>|<key>|<reason>`: the denial-hash field of this window without its second. */
  readonly denialTag: string;
}

export interface DecisionPlan {
  readonly decisionId: string;
  readonly shard: ShardKeys;
  readonly selectors: NormalizedSelectors;
  readonly attributes: NormalizedAttributes;
  readonly cost: number;
  readonly policies: readonly { readonly policy: Policy; readonly key: string }[];
  /** Every window of every applicable policy, policies flattened in order. */
  readonly windows: readonly PlannedWindow[];
  /**
   * Per applicable policy (in order), its field in the shard's override hash (`overrideField`):
   * decide.lua looks each up in the step that decides. Empty when no policy applies.
   */
  readonly overrideFields: readonly string[];
  /** The shard's override hash (`overridesKey`). */
  readonly overridesRedisKey: string;
  /** Redis key of the idempotency record; absent without an idempotency key or for a peek. */
  readonly idempotencyRedisKey?: string;
  /** SHA-256 (hex) of the normalized request when an idempotency record is kept, else ''. */
  readonly fingerprint: string;
  /** The outbox payload as JSON (@tally/events' `payloadJson`), starting with `PAYLOAD_PREFIX` (decide.lua relies on it). */
  readonly payloadJson: string;
  /** Any applicable policy fail_closed → a backend failure refuses (503); else it degrades. */
  readonly failClosed: boolean;
  /** The lease a passing decision takes: only when cost > 0 and a `concurrency` window applies. */
  readonly lease?: PlannedLease;
}

export interface PlanRefusal {
  readonly kind: 'invalid' | 'too_large';
  readonly code: DecisionCode;
  readonly reason: 'selector_identity_missing' | 'selector_identity_invalid' | null;
  readonly message: string;
}

export type PlanResult = { ok: true; plan: DecisionPlan } | { ok: false; refusal: PlanRefusal };

export interface PlanContext {
  readonly policySet: PolicySet;
  readonly tokenSecret: string;
  readonly shards: number;
  /** The global cost ceiling (`TALLY_MAX_COST`): no decision, matched or not, may cost more. */
  readonly maxCost: number;
  readonly decisionId: string;
  /** Plan exactly this policy, matched or not (the state endpoint); default: `selectPolicies`. */
  readonly only?: Policy;
  /** The decision's recorded span (`traceparent`), carried by its outbox entry to the relay. */
  readonly traceparent?: string;
}

function refuse(
  kind: PlanRefusal['kind'],
  code: DecisionCode,
  message: string,
  reason: PlanRefusal['reason'] = null,
): PlanResult {
  return { ok: false, refusal: { kind, code, reason, message } };
}

const DIMS: ReadonlySet<string> = new Set(SELECTOR_DIMS);
/** A missing key dim is reported where the caller would have to add it: a selector or an attribute. */
const isSelectorDim = (name: string): boolean => DIMS.has(name);

export function planDecision(request: DecisionRequest, ctx: PlanContext): PlanResult {
  const sel = normalizeSelectors(request.selectors, ctx.tokenSecret);
  if (!sel.ok)
    return refuse('invalid', 'selector.identity_invalid', `${sel.field} ${sel.message}`, sel.reason);
  const attr = normalizeAttributes(request.attributes);
  if (!attr.ok)
    return refuse('invalid', 'selector.identity_invalid', `${attr.field} ${attr.message}`, attr.reason);
  const { selectors } = sel;
  const { attributes } = attr;

  const policies: { policy: Policy; key: string }[] = [];
  const applicable = ctx.only
    ? [ctx.only]
    : selectPolicies(ctx.policySet, selectors, attributes, request.wholeDescriptor === true);
  for (const policy of applicable) {
    const key = keyOf(policy, selectors, attributes);
    if (!key.ok) {
      // A shadow policy is a trial: it must never change an outcome, so a request that lacks its key
      // dims is simply not counted by it (an enforced policy fails closed instead).
      if (policy.mode === 'shadow') continue;
      const field = isSelectorDim(key.missing) ? 'selectors' : 'attributes';
      const message = `${field}.${key.missing} is required by policy ${policy.name}`;
      return refuse('invalid', 'selector.identity_missing', message, 'selector_identity_missing');
    }
    policies.push({ policy: overridden(policy, request.windowOverride), key: key.value });
  }

  const cost = request.cost;
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost < 0) {
    return refuse('invalid', 'cost.invalid', 'cost must be an integer ≥ 0');
  }
  const maxCost = maxCostOf(policies, ctx.maxCost);
  if (cost > maxCost) return refuse('too_large', 'cost.too_large', tooLarge(maxCost, ctx.maxCost));

  const idem = request.idempotency_key;
  if (idem !== undefined && !isIdempotencyKey(idem))
    return refuse('invalid', 'idempotency_key.invalid', IDEMPOTENCY_KEY_RULE);

  const tenant = selectors.tenant;
  const scope = encodeScope(tenant);
  const shard = shardKeys(shardOf(tenant, ctx.shards));
  let shadowOrdinal = 0;
  const windows: PlannedWindow[] = [];
  const overrideFields: string[] = [];
  for (const { policy, key } of policies) {
    const mode = policy.mode === 'shadow' ? ++shadowOrdinal : 0;
    overrideFields.push(overrideField(policy.name, scope, key));
    for (const w of policy.windows) {
      windows.push({
        policy,
        name: w.name,
        role: w.role,
        algorithm: w.algorithm,
        ...(w.burst !== undefined && { burst: w.burst }),
        limit: w.limit,
        periodMs: w.periodMs,
        // Rate windows of one policy key share its hash; a concurrency window has its sorted set.
        redisKey:
          w.algorithm === 'concurrency'
            ? windowKey(shard, scope, policy.name, w.name, key)
            : policyStateKey(shard, scope, policy.name, key),
        mode,
        denialTag: denialTag(
          policy.name,
          key,
          w.role === 'burst' ? 'burst_quota_exhausted' : 'sustained_quota_exhausted',
        ),
      });
    }
  }

  const idempotencyRedisKey =
    idem === undefined || cost === 0 ? undefined : idempotencyKey(shard, scope, idem);
  // The fingerprint is over normalized values (token already hashed), in canonical order: selectors
  // come in SELECTOR_DIMS order and attributes sorted, so JSON.stringify is canonical. Only an
  // idempotency record stores and compares it, so without one the hash is not worth its cost.
  const fingerprint =
    idempotencyRedisKey === undefined
      ? ''
      : createHash('sha256').update(JSON.stringify({ selectors, attributes, cost })).digest('hex');
  const plan: DecisionPlan = {
    decisionId: ctx.decisionId,
    shard,
    selectors,
    attributes,
    cost,
    policies,
    windows,
    overrideFields,
    overridesRedisKey: overridesKey(shard),
    idempotencyRedisKey,
    fingerprint,
    payloadJson: payloadJson({
      id: ctx.decisionId,
      policy_set_version: ctx.policySet.version,
      tenant,
      selectors,
      attributes,
      cost,
      idempotency_key: idem,
      policies,
      traceparent: ctx.traceparent,
    }),
    failClosed: policies.some(({ policy }) => policy.onBackendFailure === 'fail_closed'),
    lease: planLease(ctx.decisionId, ctx.policySet.version, shard, selectors, cost, policies),
  };
  return { ok: true, plan };
}

/** The policy with the request's window override in place of its windows (Envoy's descriptor `limit`). */
function overridden(policy: Policy, window: WindowSpec | undefined): Policy {
  if (window === undefined) return policy;
  return { ...policy, windows: [window], maxCost: window.limit };
}

/**
 * The largest cost that can ever pass: the global `ceiling` (`TALLY_MAX_COST`), and every enforce
 * policy's `max_cost` and smallest window capacity (`capacityOf`: a cost above it could never be
 * allowed, so it is refused with 413 rather than denied with a meaningless retry-after). A shadow policy never refuses
 * (it counts and reports, never changes an outcome): neither its `max_cost` nor its windows bound the
 * cost, and its windows smaller than the cost just report would_deny. No applicable policy: the ceiling alone —
 * an unmatched decision is still usage on the ledger, and every sum of it must stay exact.
 */
export function maxCostOf(policies: readonly { readonly policy: Policy }[], ceiling: number): number {
  let max = ceiling;
  for (const { policy } of policies) {
    if (policy.mode !== 'enforce') continue;
    if (policy.maxCost < max) max = policy.maxCost;
    for (const w of policy.windows) if (capacityOf(w) < max) max = capacityOf(w);
  }
  return max;
}

function tooLarge(max: number, ceiling: number): string {
  return max === ceiling
    ? `cost must be at most ${max} (the global ceiling, TALLY_MAX_COST)`
    : `cost must be at most ${max} for these policies`;
}
