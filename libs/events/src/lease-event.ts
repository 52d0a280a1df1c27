import {
  CLOUDEVENTS_SPECVERSION,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  LEASE_EVENT_TYPE,
} from './event-types';
import { leaseEventValidator } from './event-validators';
import type { LeaseDataV1, LeaseEventV1 } from './lease-event.v1';
import { decodeLeaseEntry, type LeaseEntry } from './outbox/lease-payload';

/**
 * The `tally.lease.v1` event of a release entry of the outbox (field `l`).
 * @throws OutboxEntryError when the entry is malformed.
 */
export function leaseEventFromOutbox(entry: LeaseEntry): LeaseEventV1 {
  const { payload, timeMs } = decodeLeaseEntry(entry);
  const first = payload.windows[0];
  const data: LeaseDataV1 = {
    policy_set_version: payload.policy_set_version,
    ...(payload.tenant === undefined ? {} : { tenant: payload.tenant }),
    selectors: { ...payload.selectors },
    lease_id: payload.lease_id,
    decision_id: payload.id,
    units: payload.units,
    outcome: 'released',
    windows: payload.windows.map((w) => ({ policy: w.policy, window: w.window, key: w.key, limit: w.limit })),
  };
  return {
    specversion: CLOUDEVENTS_SPECVERSION,
    id: payload.id,
    source: EVENT_SOURCE,
    type: LEASE_EVENT_TYPE,
    time: new Date(timeMs).toISOString(),
    ...(first === undefined ? {} : { subject: `${first.policy}/${first.key}` }),
    datacontenttype: EVENT_DATA_CONTENT_TYPE,
    data,
  };
}

/** Validates a `tally.lease.v1` message as read from Kafka: the event, or every problem found. */
export function parseLeaseEvent(
  message: Buffer | string,
): { ok: true; event: LeaseEventV1 } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(typeof message === 'string' ? message : message.toString('utf8'));
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (leaseEventValidator.accepts(value)) return { ok: true, event: value as LeaseEventV1 };
  return { ok: false, reason: leaseEventValidator.problems(value).join('; ') || 'invalid' };
}
