import { ACTIVE_NAMESPACE_KEY, NAMESPACES_KEY, ProjectionKeys, isValidNamespace } from '@tally/projections';
import { OpsError } from './ops.error';
import type { RedisClient } from '@tally/redis';
import { scanKeys } from './redis-client';

/**
 * Replay bookkeeping in a namespace's meta hash, beside what the projector's batch step keeps there
 * (`created`, `updated`, `events`): `replay` = running | complete, and the range the namespace
 * covers (`covered_from`, `covered_to`, epoch ms) so `reconcile` compares only what both sides hold.
 */
export const META_REPLAY = 'replay';
export const META_COVERED_FROM = 'covered_from';
export const META_COVERED_TO = 'covered_to';

/** One row of `tally projections list`. */
export interface NamespaceInfo {
  readonly name: string;
  readonly active: boolean;
  readonly events: number;
  /** Last write, ISO 8601; null before the first batch. */
  readonly updated: string | null;
  /** `running` while a replay writes it, `complete` after; absent for projector-made namespaces. */
  readonly replay?: string;
}

export async function listNamespaces(redis: RedisClient): Promise<NamespaceInfo[]> {
  const [names, active] = await Promise.all([
    redis.smembers(NAMESPACES_KEY),
    redis.get(ACTIVE_NAMESPACE_KEY),
  ]);
  const rows: NamespaceInfo[] = [];
  for (const name of names.filter(isValidNamespace).sort()) {
    const meta = await redis.hgetall(new ProjectionKeys(name).meta());
    const updated = Number(meta.updated);
    rows.push({
      name,
      active: name === active,
      events: Number(meta.events ?? 0),
      updated:
        Number.isFinite(updated) && meta.updated !== undefined ? new Date(updated).toISOString() : null,
      ...(meta[META_REPLAY] === undefined ? {} : { replay: meta[META_REPLAY] }),
    });
  }
  return rows;
}

export async function namespaceExists(redis: RedisClient, name: string): Promise<boolean> {
  if ((await redis.sismember(NAMESPACES_KEY, name)) === 1) return true;
  // Keys without registration (an interrupted drop) still make a namespace unusable as "fresh".
  return (await redis.exists(new ProjectionKeys(name).meta(), new ProjectionKeys(name).offsets())) > 0;
}

/**
 * `tally projections switch`: points queries (and the projector, which follows the pointer) at
 * another namespace. A namespace whose replay has not completed is refused unless forced.
 */
export async function switchNamespace(
  redis: RedisClient,
  name: string,
  force = false,
): Promise<{ previous: string | null; active: string }> {
  if ((await redis.sismember(NAMESPACES_KEY, name)) !== 1) throw new OpsError(`no namespace ${name}`);
  const replay = await redis.hget(new ProjectionKeys(name).meta(), META_REPLAY);
  if (replay !== null && replay !== 'complete' && !force) {
    throw new OpsError(`namespace ${name} is not complete (replay ${replay}); use --force to switch anyway`);
  }
  const previous = await redis.getset(ACTIVE_NAMESPACE_KEY, name);
  return { previous, active: name };
}

/** `tally projections drop`: deletes every key of a namespace. The active one is refused. */
export async function dropNamespace(redis: RedisClient, name: string): Promise<{ keys: number }> {
  if ((await redis.get(ACTIVE_NAMESPACE_KEY)) === name) {
    throw new OpsError(`namespace ${name} is active; switch to another one first`);
  }
  if (!(await namespaceExists(redis, name))) throw new OpsError(`no namespace ${name}`);
  // Unregister first: a half-dropped namespace must not be listed as usable.
  await redis.srem(NAMESPACES_KEY, name);
  const keys = await scanKeys(redis, new ProjectionKeys(name).all());
  for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
  return { keys: keys.length };
}
