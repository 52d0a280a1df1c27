import type { OverrideItem, OverrideList, Wire } from '@tally/api-contract';
import { requestError } from './decision.mapper';
import { HttpTransport, TransportFailure, type RawResponse } from './http.transport';

/** One runtime override as the decision API answers it. */
export type TallyOverride = Wire<OverrideItem>;
/** One page of `list`. */
export type TallyOverridePage = Wire<OverrideList>;

/** What `set` stores: limits per window name (0 blocks the key), an optional expiry, a reason. */
export interface TallyOverrideChange {
  readonly limits: Readonly<Record<string, number>>;
  /** RFC 3339, in the future. */
  readonly expires_at?: string;
  readonly reason: string;
}

/** The tenant, for a policy whose key has no `tenant` dim. */
export interface TallyOverrideScope {
  readonly tenant?: string;
}

/**
 * The runtime overrides admin API (`/v1/overrides`), for a token with `overrides:read` /
 * `overrides:write` (or `admin`). Unlike decisions there is no fail mode: a refusal throws
 * `TallyRequestError`, and an unreachable Tally throws an `Error` naming why.
 */
export class TallyOverrides {
  constructor(
    private readonly transport: HttpTransport,
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {}

  /** `GET /v1/overrides`: one page; pass `next_cursor` back as `cursor` until it is null. */
  async list(
    query: { policy?: string; tenant?: string; cursor?: string; limit?: number } = {},
  ): Promise<TallyOverridePage> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) params.set(name, String(value));
    const text = params.toString();
    return this.expect<TallyOverridePage>(await this.call('GET', `v1/overrides${text && `?${text}`}`), [200]);
  }

  /** `GET /v1/overrides/{policy}/{key}`: the override in force, or null. */
  async get(policy: string, key: string, scope: TallyOverrideScope = {}): Promise<TallyOverride | null> {
    const answer = await this.call('GET', this.path(policy, key, scope));
    return answer.status === 404 ? null : this.expect<TallyOverride>(answer, [200]);
  }

  /** `PUT /v1/overrides/{policy}/{key}`: takes effect on the next decision. */
  async set(
    policy: string,
    key: string,
    change: TallyOverrideChange,
    scope: TallyOverrideScope = {},
  ): Promise<TallyOverride> {
    return this.expect<TallyOverride>(
      await this.call('PUT', this.path(policy, key, scope), change),
      [200, 201],
    );
  }

  /** `DELETE /v1/overrides/{policy}/{key}`: true when one was removed, false when none was in force. */
  async remove(policy: string, key: string, scope: TallyOverrideScope = {}): Promise<boolean> {
    const answer = await this.call('DELETE', this.path(policy, key, scope));
    if (answer.status === 404) return false;
    this.expect(answer, [204]);
    return true;
  }

  private path(policy: string, key: string, scope: TallyOverrideScope): string {
    const tenant = scope.tenant === undefined ? '' : `?tenant=${encodeURIComponent(scope.tenant)}`;
    return `v1/overrides/${encodeURIComponent(policy)}/${encodeURIComponent(key)}${tenant}`;
  }

  private async call(method: 'GET' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<RawResponse> {
    try {
      return await this.transport.send(method, path, this.token, body, Date.now() + this.timeoutMs);
    } catch (error) {
      if (error instanceof TransportFailure)
        throw new Error(`Tally unreachable (${error.failure.kind}): ${error.message}`);
      throw error;
    }
  }

  private expect<T>(answer: RawResponse, statuses: readonly number[]): T {
    if (!statuses.includes(answer.status)) throw requestError(answer.status, answer.body);
    return answer.body as T;
  }
}
