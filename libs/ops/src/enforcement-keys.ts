import { KEY_PREFIX, encodeScope, shardKeys, shardOf } from '@tally/engine';

// The inverse of the engine's key layout lives beside it (@tally/engine); re-exported only until the
// reconcile command imports it from there.

/** A tenant (free text) inside a SCAN pattern must match itself only. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * SCAN pattern of the state hashes of one policy (engine `policyStateKey` layout: one hash per policy
 * key holds its rate windows): every shard, or, for one tenant, its own shard and scope.
 */
export function policyStateKeyPattern(
  policy: string,
  tenant?: { readonly name: string; readonly shards: number },
): string {
  if (tenant === undefined) return `${KEY_PREFIX}:{s*}:pk:${policy}:*`;
  const shard = shardKeys(shardOf(tenant.name, tenant.shards));
  return `${escapeGlob(shard.base)}:pk:${policy}:${escapeGlob(encodeScope(tenant.name))}:*`;
}
