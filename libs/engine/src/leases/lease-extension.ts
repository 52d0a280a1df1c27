import type { PolicySet } from '@tally/policy';
import type { ExtendReply } from './extend.script';

const LINES = new WeakMap<PolicySet, string>();

/**
 * extend.lua's ARGV[5]: `<policy>\t<window>\t<lease_ttl ms>` per concurrency window of the set, one
 * line each. Built once per policy set (a set is immutable; a reload makes a new one). Policy and
 * window names match `[a-z0-9][a-z0-9_.-]*`, so neither holds a tab or a newline.
 */
export function leaseTtlsInForce(set: PolicySet): string {
  let lines = LINES.get(set);
  if (lines === undefined) {
    lines = set.policies
      .flatMap((p) =>
        p.windows
          .filter((w) => w.algorithm === 'concurrency')
          .map((w) => `${p.name}\t${w.name}\t${w.periodMs}`),
      )
      .join('\n');
    LINES.set(set, lines);
  }
  return lines;
}

/**
 * What `POST /v1/leases/{id}:extend` answers: the lease's new expiry, or why not. Only `extended`
 * changed anything; every refusal leaves the lease as it was.
 */
export type LeaseExtension =
  | {
      readonly ok: true;
      readonly leaseId: string;
      /** The new expiry (Redis time): now + the TTL granted, never earlier than before. */
      readonly expiresAtMs: number;
      /** Until then, from the script's clock. */
      readonly ttlMs: number;
      /** The longest TTL one extension of this lease may ask for now. */
      readonly maxTtlMs: number;
    }
  | LeaseExtensionRefusal;

export interface LeaseExtensionRefusal {
  readonly ok: false;
  readonly status: 400 | 403 | 404 | 409 | 503;
  readonly code:
    | 'lease.invalid_id'
    | 'lease.not_found'
    | 'lease.expired'
    | 'lease.released'
    | 'lease.ttl_too_long'
    | 'lease.not_extendable'
    | 'auth.forbidden'
    | `backend.${string}`;
  readonly message: string;
}

/** extend.lua's reply as the API's answer (pure: the statuses and codes of the error table). */
export function interpretExtendReply(leaseId: string, reply: ExtendReply): LeaseExtension {
  const { status, expiresAtMs, nowMs, maxTtlMs } = reply;
  const at = new Date(expiresAtMs).toISOString();
  switch (status) {
    case 'extended':
      return { ok: true, leaseId, expiresAtMs, ttlMs: expiresAtMs - nowMs, maxTtlMs };
    case 'unknown':
      return refuse(
        404,
        'lease.not_found',
        'no such lease (never taken, or gone one lease TTL after its expiry)',
      );
    case 'forbidden':
      return refuse(403, 'auth.forbidden', 'this token may not act for the tenant of this lease');
    case 'released':
      return refuse(409, 'lease.released', 'the lease was released; its units are no longer held');
    case 'expired':
      return refuse(409, 'lease.expired', `the lease expired at ${at}; its units are no longer held`);
    case 'ttl_too_long':
      return refuse(400, 'lease.ttl_too_long', `ttl_ms may be at most ${maxTtlMs}, this lease's lease_ttl`);
    case 'not_in_force':
      return refuse(
        409,
        'lease.not_extendable',
        `none of the lease's windows is in the policy set in force; it ends at ${at}`,
      );
  }
}

export function refuse(
  status: LeaseExtensionRefusal['status'],
  code: LeaseExtensionRefusal['code'],
  message: string,
): LeaseExtensionRefusal {
  return { ok: false, status, code, message };
}
