import { createHash } from 'node:crypto';
import { encodeTime } from 'ulid';
import type { DecisionEventV2 } from './decision-event.v2';
import type { DenyReason } from './deny-reasons';
import { decisionEventV2 } from './event-builders';
import { decodeOutboxEntry, OutboxEntryError } from './outbox/outbox-payload';

/**
 * Denials of one key within one second, as the decision script coalesced them (denials are not in
 * the outbox: a flood of 429s must not flood the ledger). The relay reads the coalescing hash of a
 * shard after the second has closed and turns each field into one event with a `count`.
 */
export interface CoalescedDenial {
  /** The hash-tag shard N of `{s<N>}` the denials were counted in. */
  readonly shard: number;
  /** Epoch second (Redis time) the denials fell in; the event's `time` is its start. */
  readonly second: number;
  /**
   * The coalescing hash field the engine counted under (it identifies the key, and the reason if the
   * engine splits by reason). With shard and second it makes the event id, so re-emission dedups.
   */
  readonly field: string;
  /** How many denials were counted; ≥ 1. */
  readonly count: number;
  /** The `OutboxPayload` JSON of the first denial of that second (the representative request). */
  readonly p: string;
  /** Why they were denied; overrides whatever outcome the payload was written with. */
  readonly reason: DenyReason;
  /** Optional window results of the first denial (`OutboxWindowResult[]` JSON). */
  readonly r?: string;
}

/**
 * The `tally.decision.v2` event standing for `count` denials.
 * @throws OutboxEntryError when the payload is malformed or the count is not a positive integer.
 */
export function denialEvent(denial: CoalescedDenial): DecisionEventV2 {
  if (!Number.isSafeInteger(denial.count) || denial.count < 1) {
    throw new OutboxEntryError(`denial count must be a positive integer, got ${denial.count}`);
  }
  if (!Number.isSafeInteger(denial.second) || denial.second < 0) {
    throw new OutboxEntryError(`denial second must be epoch seconds, got ${denial.second}`);
  }
  const timeMs = denial.second * 1000;
  const { payload, results } = decodeOutboxEntry({ p: denial.p, t: String(timeMs), r: denial.r });
  return decisionEventV2(payload, timeMs, results, {
    id: coalescedDenialId(denial.shard, denial.second, denial.field),
    count: denial.count,
    reason: denial.reason,
  });
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID-shaped id that is a pure function of (shard, second, field): its time part is the second,
 * so ids still sort by time, and its 80 "random" bits come from SHA-256, so emitting the same
 * coalesced denial twice (relay crash before it deleted the hash) yields the same id.
 */
export function coalescedDenialId(shard: number, second: number, field: string): string {
  const digest = createHash('sha256').update(`tally-denial\n${shard}\n${second}\n${field}`).digest();
  let bits = 0;
  let buffer = 0;
  let out = '';
  for (let i = 0; i < 10; i++) {
    buffer = ((buffer << 8) | (digest[i] ?? 0)) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(buffer >> bits) & 31];
    }
  }
  return encodeTime(second * 1000, 10) + out;
}
