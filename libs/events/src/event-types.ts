/**
 * CloudEvents 1.0 attribute values shared by every Tally event. The `type` strings are versioned:
 * a breaking change of `data` is a new type (`tally.usage.v2`) on its own topic, never an edit here.
 * Topic names are Kafka plumbing and live in `@tally/ledger`.
 */
export const CLOUDEVENTS_SPECVERSION = '1.0';
/** Allowed decisions with cost > 0: the commercial ledger billing consumes. */
export const USAGE_EVENT_TYPE = 'tally.usage.v1';
/**
 * Every decision, denials included (repeated denials of one key coalesced per second): the decision
 * record of the first contract. Tally no longer writes it; its consumers still read it in history.
 */
export const DECISION_EVENT_TYPE = 'tally.decision.v1';
/**
 * The decisions that have no usage record: quota denials, coalesced per second. An allowed or
 * degraded decision is one `tally.usage.v1` record and nothing else (docs/adr/0009).
 */
export const DECISION_V2_EVENT_TYPE = 'tally.decision.v2';
/** Releases of concurrency leases (not usage: billing ignores them). */
export const LEASE_EVENT_TYPE = 'tally.lease.v1';
/** Changes of runtime overrides (set, remove), on the decision topic beside the decisions they change. */
export const OVERRIDE_EVENT_TYPE = 'tally.override.v1';
/** Events are emitted on behalf of the decision API, also when the relay writes them. */
export const EVENT_SOURCE = 'tally/decision-api';
export const EVENT_DATA_CONTENT_TYPE = 'application/json';

export const DECISION_OUTCOMES = ['allowed', 'denied', 'degraded'] as const;
/**
 * - `allowed`: every window allowed and was committed.
 * - `denied`: some enforce window (or selector validation, or a fail_closed backend) refused; nothing consumed.
 * - `degraded`: allowed under `fail_open` because the backend failed; nothing could be counted.
 */
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/**
 * The Kafka `content-type` header of every event: the CloudEvents Kafka protocol binding, structured
 * mode (the whole event, envelope and `data`, is the record value).
 */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=UTF-8';
