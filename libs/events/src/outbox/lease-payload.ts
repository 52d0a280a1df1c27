import { decodeOutboxTime, OutboxEntryError } from './outbox-payload';

/**
 * The lease half of the outbox contract. A decision that takes a lease (a `concurrency` window passed)
 * stores this payload, built in TypeScript, in its lease record; the release script appends it to the
 * shard's outbox stream unchanged, as field `l`, beside `t` (Redis time of the release, ms). The relay
 * tells a release entry from a decision entry by that field and makes it a `tally.lease.v1` event.
 */
export interface LeasePayload {
  /** Payload format version; a relay refuses versions it does not know rather than guess. */
  readonly v: 1;
  /** `s<shard>-<decision id>`: what the caller releases. */
  readonly lease_id: string;
  /** The decision (ULID) that took the lease: the release event's id. */
  readonly id: string;
  /** The policy set that decided the acquisition. */
  readonly policy_set_version: string;
  readonly tenant?: string;
  /** Normalized selectors of the acquisition (token hashed). */
  readonly selectors: Readonly<Record<string, string>>;
  /** Units the lease held in each of its windows (the decision's cost). */
  readonly units: number;
  /** The concurrency windows the lease held, in decision order. */
  readonly windows: readonly LeaseWindow[];
}

export interface LeaseWindow {
  readonly policy: string;
  readonly window: string;
  /** The policy's composite key value. */
  readonly key: string;
  /** The window's limit when the lease was taken. */
  readonly limit: number;
}

/** One release entry of the outbox stream as read with XREADGROUP. */
export interface LeaseEntry {
  /** `LeasePayload` as JSON. */
  readonly l: string;
  /** Redis time of the release, epoch ms, decimal. */
  readonly t: string;
}

export function leasePayloadJson(payload: LeasePayload): string {
  return JSON.stringify(payload);
}

/** @throws OutboxEntryError when the entry is not a release entry this version can read. */
export function decodeLeaseEntry(entry: LeaseEntry): { payload: LeasePayload; timeMs: number } {
  let payload: unknown;
  try {
    payload = JSON.parse(entry.l);
  } catch {
    throw new OutboxEntryError('l is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new OutboxEntryError('l is not a JSON object');
  const p = payload as Record<string, unknown>;
  if (p.v !== 1) throw new OutboxEntryError(`unknown lease payload version ${String(p.v)}`);
  if (typeof p.lease_id !== 'string' || typeof p.id !== 'string' || p.id === '')
    throw new OutboxEntryError('l needs lease_id and id');
  if (typeof p.units !== 'number' || !Array.isArray(p.windows))
    throw new OutboxEntryError('l needs units and windows');
  const timeMs = decodeOutboxTime(entry.t);
  return { payload: payload as LeasePayload, timeMs };
}
