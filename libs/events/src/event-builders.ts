import { DecisionDataV1, type DecisionEventV1 } from './decision-event.v1';
import type { DecisionDataV2, DecisionEventV2 } from './decision-event.v2';
import type { DenyReason } from './deny-reasons';
import type { PolicyOutcomeV1 } from './event-parts.v1';
import {
  CLOUDEVENTS_SPECVERSION,
  DECISION_EVENT_TYPE,
  DECISION_V2_EVENT_TYPE,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  USAGE_EVENT_TYPE,
  type DecisionOutcome,
} from './event-types';
import {
  decodeOutboxEntry,
  OutboxEntryError,
  type OutboxEntry,
  type OutboxPayload,
  type OutboxWindowResult,
} from './outbox/outbox-payload';
import { UsageDataV1, type UsageEventV1 } from './usage-event.v1';
import { TRACEPARENT } from './cloud-event.v1';
import type { LeaseEventV1 } from './lease-event.v1';
import type { OverrideEventV1 } from './override-event.v1';

/**
 * The one ledger record of a decision entry of the outbox, decoded once: its `tally.usage.v1` event
 * (an allowed or degraded decision, the only entries decide.lua and the degraded ledger write), or,
 * for a denied entry, its `tally.decision.v2` event. An allowed entry that spent nothing is no
 * usage and no decision record: the engine never writes one, so it is refused (the relay
 * dead-letters it) rather than dropped.
 * @throws OutboxEntryError when the entry is malformed.
 */
export function ledgerEventFromOutbox(entry: OutboxEntry): UsageEventV1 | DecisionEventV2 {
  const { payload, timeMs, results } = decodeOutboxEntry(entry);
  if (payload.outcome === 'denied') {
    if (payload.reason === undefined) throw new OutboxEntryError('a denied entry needs p.reason');
    return decisionEventV2(payload, timeMs, results, { id: payload.id, count: 1, reason: payload.reason });
  }
  if (payload.cost <= 0)
    throw new OutboxEntryError('an allowed entry of cost 0 spends nothing (the engine writes none)');
  return usageEvent(payload, timeMs, results);
}

/**
 * The usage event of an outbox entry, or null when the decision spent nothing (cost 0 reports state
 * and consumes nothing, so it is not commercial usage) or was not allowed.
 * @throws OutboxEntryError when the entry is malformed.
 */
export function usageEventFromOutbox(entry: OutboxEntry): UsageEventV1 | null {
  const { payload, timeMs, results } = decodeOutboxEntry(entry);
  if (payload.cost <= 0 || payload.outcome === 'denied') return null;
  return usageEvent(payload, timeMs, results);
}

function usageEvent(
  payload: OutboxPayload,
  timeMs: number,
  results: readonly OutboxWindowResult[],
): UsageEventV1 {
  const data = dataOf<UsageDataV1>(USAGE_DATA_FIELDS, payload, {
    outcome: payload.outcome === 'degraded' ? 'degraded' : 'allowed',
    policies: policyOutcomes(payload, results),
  });
  return { ...envelope(payload, timeMs), type: USAGE_EVENT_TYPE, data };
}

/**
 * The `tally.decision.v1` event of an outbox entry, as relays of the first contract published it
 * beside the usage event. Tally publishes none any more: tests and tools build old-era history with it.
 * @throws OutboxEntryError when the entry is malformed.
 */
export function decisionEventFromOutbox(entry: OutboxEntry): DecisionEventV1 {
  const { payload, timeMs, results } = decodeOutboxEntry(entry);
  const outcome = payload.outcome;
  const data = decisionData(payload, results, outcome, outcome === 'denied' ? payload.reason : undefined, 1);
  return { ...envelope(payload, timeMs), type: DECISION_EVENT_TYPE, data };
}

/** A `tally.decision.v2` event: one denial, or the coalesced denials of one key in one second. */
export function decisionEventV2(
  payload: OutboxPayload,
  timeMs: number,
  results: readonly OutboxWindowResult[],
  denial: { id: string; count: number; reason: DenyReason },
): DecisionEventV2 {
  const data = decisionData(payload, results, 'denied', denial.reason, denial.count) as DecisionDataV2;
  // A coalesced denial stands for many decisions: no one decision's trace is its own.
  const head = { ...payload, id: denial.id, traceparent: undefined };
  return { ...envelope(head, timeMs), type: DECISION_V2_EVENT_TYPE, data };
}

/**
 * The `data` of a decision record, v1 or v2 (a v2 denial's fields are those of a v1 denial), in
 * wire order.
 */
function decisionData(
  payload: OutboxPayload,
  results: readonly OutboxWindowResult[],
  outcome: DecisionOutcome,
  reason: DenyReason | undefined,
  count: number,
): DecisionDataV1 {
  return dataOf<DecisionDataV1>(DECISION_DATA_FIELDS, payload, {
    outcome,
    reason,
    count,
    policies: policyOutcomes(payload, results),
  });
}

/** Each event's `data` property names in wire order, read from its schema once at load, not per record. */
const USAGE_DATA_FIELDS = Object.keys(UsageDataV1.properties);
const DECISION_DATA_FIELDS = Object.keys(DecisionDataV1.properties);

/**
 * An event's `data` from an outbox payload, in the order of the event's schema (wire order: the
 * bytes on Kafka follow it): each property from `derived` when the builder computes it, else the
 * payload's field of the same name (the payload schema reuses the events' field schemas, so a field
 * added to both is carried with no builder edit). Absent values are omitted, never `null`.
 */
function dataOf<T extends object>(
  fields: readonly string[],
  payload: OutboxPayload,
  derived: { readonly [K in keyof T]?: T[K] },
): T {
  const source = payload as unknown as Readonly<Record<string, unknown>>;
  const computed = derived as Readonly<Record<string, unknown>>;
  const data: Record<string, unknown> = {};
  for (const name of fields) {
    const value = name in computed ? computed[name] : copyOf(source[name]);
    if (value !== undefined) data[name] = value;
  }
  return data as T;
}

/** A copy of a flat record (selectors, attributes), so an event never shares the decoded payload's objects. */
function copyOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : value;
}

/**
 * The Kafka message key: the tenant, else the subject's key, so one tenant's (or one key's) events
 * stay ordered in one partition. Falls back to the id for decisions no policy applied to.
 */
export function kafkaKeyOf(
  event: UsageEventV1 | DecisionEventV1 | DecisionEventV2 | LeaseEventV1 | OverrideEventV1,
): string {
  // typeof, not `!== undefined`: a consumed event may carry null for an absent optional field.
  if (typeof event.data.tenant === 'string') return event.data.tenant;
  const subject = event.subject;
  // Policy names never contain '/', so the key is everything after the first one.
  if (typeof subject === 'string') return subject.slice(subject.indexOf('/') + 1);
  return event.id;
}

function envelope(payload: OutboxPayload, timeMs: number) {
  const first = payload.policies[0];
  return {
    specversion: CLOUDEVENTS_SPECVERSION,
    id: payload.id,
    source: EVENT_SOURCE,
    time: new Date(timeMs).toISOString(),
    ...optional('subject', first === undefined ? undefined : `${first.name}/${first.key}`),
    datacontenttype: EVENT_DATA_CONTENT_TYPE,
    // The decision's span: the relay replaces it with its own span's (a child of it) when it traces.
    // One the schema would refuse is left out: a record must never be dead-lettered for its trace.
    ...optional('traceparent', traceparentOf(payload)),
  } as const;
}

function policyOutcomes(payload: OutboxPayload, results: readonly OutboxWindowResult[]): PolicyOutcomeV1[] {
  let next = 0;
  return payload.policies.map((policy) => {
    // decide.lua writes `override` on every window of a policy that had one in force.
    const version = results[next]?.override;
    return {
      name: policy.name,
      mode: policy.mode,
      key: policy.key,
      ...optional('override_version', typeof version === 'number' ? version : undefined),
      windows: policy.windows.map((window) => {
        const result = results[next++];
        return {
          name: window.name,
          role: window.role,
          limit: window.limit,
          ...(result === undefined
            ? {}
            : {
                remaining: result.remaining,
                reset_ms: result.reset_ms,
                would_deny: result.would_deny === true,
                ...optional('override_limit', typeof result.limit === 'number' ? result.limit : undefined),
              }),
        };
      }),
    };
  });
}

function traceparentOf(payload: OutboxPayload): string | undefined {
  const value = payload.traceparent;
  return typeof value === 'string' && TRACEPARENT.test(value) ? value : undefined;
}

/** Optional fields are omitted, never `undefined`/`null`, so the JSON stays minimal and validates. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
