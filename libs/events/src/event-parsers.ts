import { DecisionEventV1 } from './decision-event.v1';
import type { DecisionEventV2 } from './decision-event.v2';
import {
  DECISION_EVENT_TYPE,
  DECISION_V2_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  USAGE_EVENT_TYPE,
} from './event-types';
import {
  decisionEventValidator,
  decisionV2EventValidator,
  overrideEventValidator,
  usageEventValidator,
  type EventValidator,
} from './event-validators';
import type { OverrideEventV1 } from './override-event.v1';
import { UsageEventV1 } from './usage-event.v1';

/** A consumed message: the validated event, or why it was rejected (the dead-letter reason). */
export type ParseResult<E> =
  { readonly ok: true; readonly event: E } | { readonly ok: false; readonly reason: string };

/**
 * What the projector folds: usage, decisions of both contracts (v2: denials only; v1: every
 * decision), and the override changes the decision topics also carry.
 */
export type LedgerEvent = UsageEventV1 | DecisionEventV1 | DecisionEventV2 | OverrideEventV1;

interface EventKind {
  readonly type: string;
  readonly validator: EventValidator;
}

const USAGE: EventKind = { type: USAGE_EVENT_TYPE, validator: usageEventValidator };
const DECISION: EventKind = { type: DECISION_EVENT_TYPE, validator: decisionEventValidator };
const DECISION_V2: EventKind = { type: DECISION_V2_EVENT_TYPE, validator: decisionV2EventValidator };
const OVERRIDE: EventKind = { type: OVERRIDE_EVENT_TYPE, validator: overrideEventValidator };

/** Validates a `tally.usage.v1` message as read from Kafka. */
export function parseUsageEvent(message: Buffer | string): ParseResult<UsageEventV1> {
  return parseAs(USAGE, message);
}

/** Validates a `tally.decision.v1` message as read from Kafka. */
export function parseDecisionEvent(message: Buffer | string): ParseResult<DecisionEventV1> {
  return parseAs(DECISION, message);
}

/** Validates a `tally.decision.v2` message as read from Kafka. */
export function parseDecisionV2Event(message: Buffer | string): ParseResult<DecisionEventV2> {
  return parseAs(DECISION_V2, message);
}

/** Validates a `tally.override.v1` message as read from Kafka. */
export function parseOverrideEvent(message: Buffer | string): ParseResult<OverrideEventV1> {
  return parseAs(OVERRIDE, message);
}

/** Validates any ledger event type, chosen by its `type` attribute (for a consumer of both topics). */
export function parseLedgerEvent(message: Buffer | string): ParseResult<LedgerEvent> {
  const plain = parseJson(message);
  if (!plain.ok) return plain;
  switch (plain.event.type) {
    case USAGE_EVENT_TYPE:
      return validated(USAGE, plain.event, plain.nulls);
    case DECISION_EVENT_TYPE:
      return validated(DECISION, plain.event, plain.nulls);
    case DECISION_V2_EVENT_TYPE:
      return validated(DECISION_V2, plain.event, plain.nulls);
    case OVERRIDE_EVENT_TYPE:
      return validated(OVERRIDE, plain.event, plain.nulls);
    default:
      return { ok: false, reason: `type: unknown event type ${JSON.stringify(plain.event.type)}` };
  }
}

function parseAs<E extends LedgerEvent>(kind: EventKind, message: Buffer | string): ParseResult<E> {
  const plain = parseJson(message);
  if (!plain.ok) return plain;
  // The type is checked first so a message on the wrong topic gets one clear reason, not twenty.
  if (plain.event.type !== kind.type) {
    return { ok: false, reason: `type: expected ${kind.type}, got ${JSON.stringify(plain.event.type)}` };
  }
  return validated(kind, plain.event, plain.nulls);
}

type ParsedJson =
  | { readonly ok: true; readonly event: Record<string, unknown>; readonly nulls: boolean }
  | { readonly ok: false; readonly reason: string };

/** `nulls`: whether the text holds a `null` anywhere (rarely: only then is there one to drop). */
function parseJson(message: Buffer | string): ParsedJson {
  const text = typeof message === 'string' ? message : message.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  return { ok: true, event: value as Record<string, unknown>, nulls: text.includes('null') };
}

/**
 * The compiled validator decides; its verbose twin explains a rejection, every problem listed.
 * The checked plain object IS the event (the objects are this parse's own, fresh from JSON.parse,
 * so nothing is copied). Null optional fields, which consumers have always read as absent, are
 * dropped before validation so the published schema (absent, never null) is the one that judges.
 */
function validated<E extends LedgerEvent>(
  kind: EventKind,
  plain: Record<string, unknown>,
  nulls: boolean,
): ParseResult<E> {
  if (nulls) dropEventNulls(plain);
  if (kind.validator.accepts(plain)) return { ok: true, event: plain as unknown as E };
  const reasons = kind.validator.problems(plain);
  return { ok: false, reason: reasons.length > 0 ? reasons.join('; ') : 'invalid' };
}

/**
 * Drops `null` fields where the event may have optional ones: the envelope, `data`, each window. A
 * null required field becomes a missing one, rejected all the same. `data.reason` keeps its null:
 * a reason, when present at all, must be a deny reason (as it always had to be).
 */
function dropEventNulls(event: Record<string, unknown>): void {
  dropNulls(event);
  const data = event.data;
  if (!isObject(data)) return;
  const reason = data.reason;
  dropNulls(data);
  if (reason === null) data.reason = null;
  if (!Array.isArray(data.policies)) return;
  for (const policy of data.policies as unknown[]) {
    if (!isObject(policy) || !Array.isArray(policy.windows)) continue;
    for (const window of policy.windows as unknown[]) if (isObject(window)) dropNulls(window);
  }
}

function dropNulls(record: Record<string, unknown>): void {
  for (const key in record) if (record[key] === null) delete record[key];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
