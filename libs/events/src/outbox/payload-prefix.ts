import type { DenyReason } from '../deny-reasons';

/**
 * The payload heads the three writers of an outbox payload rely on. The decision API builds the
 * allowed payload (`payloadJson`); decide.lua derives a denial's sample by swapping exactly
 * `PAYLOAD_PREFIX` for the denied head (it holds the same constant: payload-prefix.spec.ts reads
 * decide.lua and holds it to this one); the degraded ledger swaps it for the degraded head.
 * Swapping a prefix, not re-encoding, keeps every other byte what the allowed decision wrote.
 */
export const PAYLOAD_PREFIX = '{"v":1,"outcome":"allowed",';

/** The head decide.lua writes for a denial's sample payload (`…#p` in the denial hash). */
export function deniedPayloadPrefix(reason: DenyReason): string {
  return `{"v":1,"outcome":"denied","reason":${JSON.stringify(reason)},`;
}

const DEGRADED_PREFIX = '{"v":1,"outcome":"degraded",';

/**
 * The payload of a degraded decision (allowed under fail_open while Redis failed): the allowed
 * payload with `outcome: degraded` and its `degraded_cause`, every other byte unchanged.
 */
export function degradedPayload(allowedPayload: string, cause: string): string {
  if (!allowedPayload.startsWith(PAYLOAD_PREFIX)) throw new Error('payload lacks its allowed prefix');
  return `${DEGRADED_PREFIX}"degraded_cause":${JSON.stringify(cause)},${allowedPayload.slice(PAYLOAD_PREFIX.length)}`;
}

/** Field `r` of a degraded entry: no window was evaluated, so the events carry only static facts. */
export const DEGRADED_RESULTS = '[]';
