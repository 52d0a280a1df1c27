import { Inject, Injectable } from '@nestjs/common';
import { ENGINE_OPTIONS, POLICY_SET_SOURCE } from '../engine.constants';
import type { EngineOptions, PolicySetSource } from '../engine.options';
import { decodeCursor, type ListCursor, type OverridePage } from './override-list';
import {
  checkChange,
  checkTarget,
  EMPTY_KEY,
  type FieldProblem,
  type OverrideBody,
} from './override-validation';
import type { Override, OverrideTarget } from './override.types';
import { OverridesStore, type OverrideWritten } from './overrides.store';
import { encodeScope, shardOf } from '../store/keys';

export type OverrideResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly kind: 'invalid'; readonly errors: readonly FieldProblem[] }
  | { readonly ok: false; readonly kind: 'not_found' };

/** The address of an override as the admin API spells it: path `{policy}/{key}`, query `tenant`. */
export interface OverrideAddress {
  readonly policy: string;
  readonly key: string;
  readonly tenant?: string;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/**
 * The use cases of runtime overrides: validate against the policy set in force, then read or change
 * the store. The caller (the HTTP controller) judges the token's tenant scope with `tenantOf` first.
 */
@Injectable()
export class OverridesService {
  constructor(
    private readonly store: OverridesStore,
    @Inject(POLICY_SET_SOURCE) private readonly policies: PolicySetSource,
    @Inject(ENGINE_OPTIONS) private readonly options: EngineOptions,
  ) {}

  /** The validated target (policy, key, tenant), or the 400's field problems. */
  target(address: OverrideAddress): OverrideResult<OverrideTarget> {
    const checked = checkTarget(this.policies.current, address.policy, address.key, address.tenant);
    if (!checked.ok) return { ok: false, kind: 'invalid', errors: checked.errors };
    const { policy, key, tenant } = checked.value;
    return { ok: true, value: { policy, key, tenant } };
  }

  async put(
    address: OverrideAddress,
    body: OverrideBody,
    setBy: string,
  ): Promise<OverrideResult<OverrideWritten>> {
    const checked = checkTarget(this.policies.current, address.policy, address.key, address.tenant);
    const problems: FieldProblem[] = checked.ok ? [] : [...checked.errors];
    const policy = this.policies.current.policies.find((p) => p.name === address.policy);
    const clock = this.options.clock ?? Date.now;
    const change = policy === undefined ? undefined : checkChange(policy, body, setBy, clock());
    if (change !== undefined && !change.ok) problems.push(...change.errors);
    if (!checked.ok || change === undefined || !change.ok)
      return { ok: false, kind: 'invalid', errors: problems };
    const { policy: name, key, tenant } = checked.value;
    return { ok: true, value: await this.store.set({ policy: name, key, tenant }, change.value) };
  }

  async get(address: OverrideAddress): Promise<OverrideResult<Override>> {
    const target = this.target(address);
    if (!target.ok) return target;
    const found = await this.store.get(target.value);
    return found === null ? { ok: false, kind: 'not_found' } : { ok: true, value: found };
  }

  /** `removedBy`: the NAME of the token that removes it (on the ledger with the change, never the token). */
  async remove(
    address: OverrideAddress,
    removedBy: string,
    reason = '',
  ): Promise<OverrideResult<OverrideWritten>> {
    const target = this.target(address);
    if (!target.ok) return target;
    const removed = await this.store.remove(target.value, removedBy, reason);
    return removed === null ? { ok: false, kind: 'not_found' } : { ok: true, value: removed };
  }

  async list(query: {
    policy?: string;
    tenant?: string;
    cursor?: string;
    limit?: string;
  }): Promise<OverrideResult<OverridePage>> {
    const errors: FieldProblem[] = [];
    const limit = query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
      errors.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIST_LIMIT}` });
    let cursor: ListCursor | undefined;
    if (query.cursor !== undefined) {
      cursor = decodeCursor(query.cursor) ?? undefined;
      const shards = this.options.shards;
      const fits =
        cursor !== undefined &&
        cursor.shard < shards &&
        (query.tenant === undefined || cursor.shard === shardOf(query.tenant, shards)) &&
        (query.policy === undefined || cursor.field.startsWith(`${query.policy}:`)) &&
        (query.tenant === undefined ||
          query.policy === undefined ||
          cursor.field.startsWith(`${query.policy}:${encodeScope(query.tenant)}:`));
      if (!fits) errors.push({ path: 'cursor', message: 'is not a cursor of this listing' });
    }
    if (errors.length > 0) return { ok: false, kind: 'invalid', errors };
    return {
      ok: true,
      value: await this.store.list({ policy: query.policy, tenant: query.tenant, cursor, limit }),
    };
  }
}

/** The key as the API spells it: `-` for the empty key of a policy without key dims. */
export function keyOnWire(key: string): string {
  return key === '' ? EMPTY_KEY : key;
}
