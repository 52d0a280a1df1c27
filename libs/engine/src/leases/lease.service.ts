import { Inject, Injectable } from '@nestjs/common';
import { LEASE_STORE, POLICY_SET_SOURCE } from '../engine.constants';
import type { PolicySetSource } from '../engine.options';
import { leaseKey, parseLeaseId, shardKeys } from '../store/keys';
import type { LeaseStore } from './lease-store';
import { interpretExtendReply, leaseTtlsInForce, refuse, type LeaseExtension } from './lease-extension';

/**
 * Giving a lease back (`POST /v1/leases/{id}:release`) or keeping it longer (`…:extend`). The id names the lease's shard and decision
 * (`parseLeaseId`), so the record is found with no lookup; release.lua returns the units to every
 * window the lease holds and appends a release event to the shard's outbox, in one step.
 *
 * Releasing twice is an idempotent no-op (`already_released`, nothing changes): a caller whose first
 * release timed out can simply retry. A lease released after its expiry is `expired`: its units came
 * back at expiry and nothing else happens.
 *
 * Extending moves a live lease's expiry to now + a TTL no longer than the shortest `lease_ttl` in
 * force among its windows (extend.lua): a holder that stops extending frees its units within one
 * lease TTL, as a fresh lease would. An expired or released lease is never extended (409).
 */
export type LeaseRelease =
  | {
      readonly ok: true;
      readonly outcome: 'released' | 'already_released' | 'expired';
      readonly leaseId: string;
      readonly expiresAtMs: number;
      /** When it was released: now, or by the earlier call; absent for `expired`. */
      readonly releasedAtMs?: number;
    }
  | {
      readonly ok: false;
      readonly kind: 'invalid' | 'not_found' | 'forbidden' | 'unavailable';
      readonly code: 'lease.invalid_id' | 'lease.not_found' | 'auth.forbidden' | `backend.${string}`;
      readonly message: string;
    };

@Injectable()
export class LeaseService {
  constructor(
    @Inject(LEASE_STORE) private readonly store: LeaseStore,
    @Inject(POLICY_SET_SOURCE) private readonly policies: PolicySetSource,
  ) {}

  /** `tenants`: the caller token's tenant allow-list, or null when it may act for every tenant. */
  async release(leaseId: string, tenants: readonly string[] | null): Promise<LeaseRelease> {
    const parsed = parseLeaseId(leaseId);
    if (parsed === null)
      return {
        ok: false,
        kind: 'invalid',
        code: 'lease.invalid_id',
        message: 'a lease id is s<shard>-<decision id>, as the decision answered it',
      };
    const shard = shardKeys(parsed.shard);
    const keys = { record: leaseKey(shard, parsed.decisionId), outbox: shard.outbox };
    const step = await this.store.release(keys, leaseId, tenants);
    if (!step.ok)
      return {
        ok: false,
        kind: 'unavailable',
        code: `backend.${step.failure.slice('backend_'.length)}`,
        message: step.failure,
      };
    const { status, expiresAtMs, releasedAtMs } = step.value;
    switch (status) {
      case 'unknown':
        return {
          ok: false,
          kind: 'not_found',
          code: 'lease.not_found',
          message: 'no such lease (never taken, or gone one lease TTL after its expiry)',
        };
      case 'forbidden':
        return {
          ok: false,
          kind: 'forbidden',
          code: 'auth.forbidden',
          message: 'this token may not act for the tenant of this lease',
        };
      case 'expired':
        return { ok: true, outcome: 'expired', leaseId, expiresAtMs };
      case 'released':
      case 'already_released':
        return { ok: true, outcome: status, leaseId, expiresAtMs, releasedAtMs };
    }
  }

  /** `ttlMs`: the TTL asked for (1..MAX_LEASE_TTL_MS of @tally/api-contract, validated by the caller); undefined = the longest. */
  async extend(
    leaseId: string,
    ttlMs: number | undefined,
    tenants: readonly string[] | null,
  ): Promise<LeaseExtension> {
    const parsed = parseLeaseId(leaseId);
    if (parsed === null)
      return refuse(
        400,
        'lease.invalid_id',
        'a lease id is s<shard>-<decision id>, as the decision answered it',
      );
    const record = leaseKey(shardKeys(parsed.shard), parsed.decisionId);
    const ttlsInForce = leaseTtlsInForce(this.policies.current);
    const step = await this.store.extendLease(record, { leaseId, tenants, ttlMs, ttlsInForce });
    if (!step.ok) return refuse(503, `backend.${step.failure.slice('backend_'.length)}`, step.failure);
    return interpretExtendReply(leaseId, step.value);
  }
}
