import { KEY_PREFIX, NO_TENANT, encodeScope, shardKeys, shardOf } from '@tally/engine';

/** The tenant and policy key of one enforcement window hash. */
export interface WindowKeyParts {
  /** null: the no-tenant scope (`_`). */
  readonly tenant: string | null;
  /** The policy's key value, as `keyOf` built it (and as the projection records it). */
  readonly key: string;
}

/** A tenant (free text) inside a SCAN pattern must match itself only. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * SCAN pattern of the window hashes of one policy window (engine `windowKey` layout): every shard,
 * or, for one tenant, its own shard and scope.
 */
export function windowKeyPattern(
  policy: string,
  window: string,
  tenant?: { readonly name: string; readonly shards: number },
): string {
  if (tenant === undefined) return `${KEY_PREFIX}:{s*}:w:${policy}:${window}:*`;
  const shard = shardKeys(shardOf(tenant.name, tenant.shards));
  return `${escapeGlob(shard.base)}:w:${policy}:${window}:${escapeGlob(encodeScope(tenant.name))}:*`;
}

/**
 * Inverse of the engine's `windowKey` for a known policy and window. The scope is percent-encoded
 * without ':' (`encodeScope`), so the first ':' after it ends it and the rest is the key value.
 */
export function parseWindowKey(redisKey: string, policy: string, window: string): WindowKeyParts | null {
  const m = /^tally:v1:\{s\d+\}:w:(.*)$/.exec(redisKey);
  const head = `${policy}:${window}:`;
  if (m === null || !m[1].startsWith(head)) return null;
  const rest = m[1].slice(head.length);
  const colon = rest.indexOf(':');
  if (colon < 0) return null;
  const scope = rest.slice(0, colon);
  return { tenant: decodeScope(scope), key: rest.slice(colon + 1) };
}

/** Inverse of `encodeScope`: `_` is no tenant; `%25 %3A %7B %7D %5F` are the escaped characters. */
export function decodeScope(scope: string): string | null {
  if (scope === NO_TENANT) return null;
  return scope.replace(/%(25|3A|7B|7D|5F)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
