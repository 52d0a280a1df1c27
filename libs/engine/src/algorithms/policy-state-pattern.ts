import { KEY_PREFIX, encodeScope, shardKeys, shardOf } from '../store/keys';

/** A tenant (free text) inside a SCAN pattern must match itself only. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * SCAN pattern of the state hashes of one policy (`policyStateKey` layout: one hash per policy key
 * holds its rate windows): every shard, or, for one tenant, its own shard and scope. The engine owns
 * its key layout; `tally reconcile --enforcement` asks it for this pattern.
 */
export function policyStateKeyPattern(
  policy: string,
  tenant?: { readonly name: string; readonly shards: number },
): string {
  if (tenant === undefined) return `${KEY_PREFIX}:{s*}:pk:${policy}:*`;
  const shard = shardKeys(shardOf(tenant.name, tenant.shards));
  return `${escapeGlob(shard.base)}:pk:${policy}:${escapeGlob(encodeScope(tenant.name))}:*`;
}
