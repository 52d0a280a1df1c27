import { NamespaceRefusedError, ProjectionNamespaces, type NamespaceInfo } from '@tally/projections';
import { OpsError } from './ops.error';
import type { RedisClient } from '@tally/redis';

/**
 * `tally projections list|switch|drop`. Namespaces are owned by `ProjectionNamespaces` (the
 * projector calls the same class); these only turn its refusals into the CLI's exit-1 errors.
 */
export async function listNamespaces(redis: RedisClient): Promise<NamespaceInfo[]> {
  return new ProjectionNamespaces(redis).list();
}

/** A registered namespace, or keys left by an interrupted drop: either way not free for a replay. */
export async function namespaceExists(redis: RedisClient, name: string): Promise<boolean> {
  return new ProjectionNamespaces(redis).exists(name);
}

/** Points queries (and the projector) at another namespace; an incomplete replay only when forced. */
export async function switchNamespace(
  redis: RedisClient,
  name: string,
  force = false,
): Promise<{ previous: string | null; active: string }> {
  return refusedAsOpsError(() => new ProjectionNamespaces(redis).switchTo(name, force));
}

/** Deletes every key of a namespace. The active one is refused. */
export async function dropNamespace(redis: RedisClient, name: string): Promise<{ keys: number }> {
  return refusedAsOpsError(() => new ProjectionNamespaces(redis).drop(name));
}

export type { NamespaceInfo };

async function refusedAsOpsError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof NamespaceRefusedError) throw new OpsError(error.message);
    throw error;
  }
}
