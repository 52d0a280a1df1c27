import {
  CLOUDEVENTS_SPECVERSION,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  OVERRIDE_EVENT_TYPE,
} from './event-types';
import type { OverrideEventV1, OverrideStateV1 } from './override-event.v1';
import { decodeOverrideEntry, type OverrideEntry, type StoredOverride } from './outbox/override-payload';

/**
 * The `tally.override.v1` event of an override entry of the outbox (field `o`). Pure.
 * @throws OutboxEntryError when the entry is malformed.
 */
export function overrideEventFromOutbox(entry: OverrideEntry): OverrideEventV1 {
  const { head, before, after, version, timeMs } = decodeOverrideEntry(entry);
  return {
    specversion: CLOUDEVENTS_SPECVERSION,
    id: head.id,
    source: EVENT_SOURCE,
    type: OVERRIDE_EVENT_TYPE,
    time: new Date(timeMs).toISOString(),
    subject: `${head.policy}/${head.key}`,
    datacontenttype: EVENT_DATA_CONTENT_TYPE,
    data: {
      policy: head.policy,
      key: head.key,
      ...(typeof head.tenant === 'string' ? { tenant: head.tenant } : {}),
      action: head.action,
      ...(before === null ? {} : { before: stateOf(before) }),
      ...(after === null ? {} : { after: stateOf(after) }),
      set_by: head.set_by,
      reason: head.reason,
      version,
    },
  };
}

function stateOf(stored: StoredOverride): OverrideStateV1 {
  return {
    version: stored.version,
    limits: { ...stored.limits },
    ...(stored.expiresAtMs === null ? {} : { expires_at: new Date(stored.expiresAtMs).toISOString() }),
    reason: stored.reason,
    set_by: stored.setBy,
    updated_at: new Date(stored.updatedAtMs).toISOString(),
  };
}
