import { scanKeys, type RedisClient } from '@tally/redis';
import {
  ACTIVE_NAMESPACE_KEY,
  NAMESPACES_KEY,
  ProjectionKeys,
  isValidNamespace,
  offsetField,
  parseOffsetField,
} from '../sink/projection-keys';
import type { NamespaceCoverage, NamespaceInfo, ReplayStart, StoredOffset } from './namespace-info';
import { NamespaceRefusedError } from './namespace-refused.error';

/**
 * Replay bookkeeping in a namespace's meta hash, beside what the batch step keeps there (`created`,
 * `updated`, `events`): `replay` = running | complete, and the range the namespace covers
 * (`covered_from`, `covered_to`, epoch ms) so reconcile compares only what both sides hold.
 */
const META_REPLAY = 'replay';
const META_COVERED_FROM = 'covered_from';
const META_COVERED_TO = 'covered_to';
/** Keys unlinked per command when a namespace is dropped: bounded so Redis is never held long. */
const UNLINK_CHUNK = 500;

/**
 * The one owner of projection namespaces: the registry, the active pointer, each namespace's stored
 * offsets and its replay metadata. The projector (start, follow a switch, resume) and the CLI
 * (`projections list|switch|drop`, `replay`, `reconcile`, `consumers`) both go through it, so the
 * layout of these keys and the rules around them (never drop the active one, never switch to a
 * half-replayed one unless forced) live in one place.
 */
export class ProjectionNamespaces {
  constructor(private readonly redis: RedisClient) {}

  /** `[a-z0-9][a-z0-9_-]{0,62}`: short and key-safe. */
  static isValidName(name: string): boolean {
    return isValidNamespace(name);
  }

  /** The namespace queries read and the projector writes; null before any projector started. */
  async active(): Promise<string | null> {
    return this.redis.get(ACTIVE_NAMESPACE_KEY);
  }

  /**
   * Registers `name` and makes it active unless one already is (first start); returns the active
   * one. SET NX: two projectors starting together agree on one.
   */
  async ensureActive(name: string): Promise<string> {
    const keys = new ProjectionKeys(name);
    await this.redis.sadd(NAMESPACES_KEY, name);
    const [seconds, micros] = await this.redis.time();
    await this.redis.hsetnx(
      keys.meta(),
      'created',
      Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    );
    await this.redis.set(ACTIVE_NAMESPACE_KEY, name, 'NX');
    return (await this.active()) ?? name;
  }

  /** Registered (created by a projector or a replay, not dropped). */
  async isRegistered(name: string): Promise<boolean> {
    return (await this.redis.sismember(NAMESPACES_KEY, name)) === 1;
  }

  /**
   * Registered, or holding keys without registration (an interrupted drop): either way the name is
   * not free for a fresh replay.
   */
  async exists(name: string): Promise<boolean> {
    if (await this.isRegistered(name)) return true;
    const keys = new ProjectionKeys(name);
    return (await this.redis.exists(keys.meta(), keys.offsets())) > 0;
  }

  /** The namespace a query reads: the one it names if that exists, else the active one; null if none. */
  async resolve(requested?: string): Promise<string | null> {
    if (requested === undefined) return this.active();
    return isValidNamespace(requested) && (await this.isRegistered(requested)) ? requested : null;
  }

  /** Every registered namespace, by name, with its counters and replay state. */
  async list(): Promise<NamespaceInfo[]> {
    const [names, active] = await Promise.all([
      this.redis.smembers(NAMESPACES_KEY),
      this.redis.get(ACTIVE_NAMESPACE_KEY),
    ]);
    const rows: NamespaceInfo[] = [];
    for (const name of names.filter(isValidNamespace).sort()) {
      const meta = await this.redis.hgetall(new ProjectionKeys(name).meta());
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

  /**
   * Points queries (and the projector, which follows the pointer) at another namespace.
   * @throws NamespaceRefusedError for an unknown namespace, or one whose replay has not completed
   * unless `force`.
   */
  async switchTo(name: string, force = false): Promise<{ previous: string | null; active: string }> {
    if (!(await this.isRegistered(name))) throw new NamespaceRefusedError(`no namespace ${name}`);
    const replay = await this.redis.hget(new ProjectionKeys(name).meta(), META_REPLAY);
    if (replay !== null && replay !== 'complete' && !force) {
      throw new NamespaceRefusedError(
        `namespace ${name} is not complete (replay ${replay}); use --force to switch anyway`,
      );
    }
    const previous = await this.redis.getset(ACTIVE_NAMESPACE_KEY, name);
    return { previous, active: name };
  }

  /**
   * Deletes every key of a namespace.
   * @throws NamespaceRefusedError for the active namespace or one that does not exist.
   */
  async drop(name: string): Promise<{ keys: number }> {
    if ((await this.active()) === name) {
      throw new NamespaceRefusedError(`namespace ${name} is active; switch to another one first`);
    }
    if (!(await this.exists(name))) throw new NamespaceRefusedError(`no namespace ${name}`);
    // Unregister first: a half-dropped namespace must not be listed as usable.
    await this.redis.srem(NAMESPACES_KEY, name);
    const keys = await scanKeys(this.redis, new ProjectionKeys(name).all());
    for (let i = 0; i < keys.length; i += UNLINK_CHUNK)
      await this.redis.unlink(...keys.slice(i, i + UNLINK_CHUNK));
    return { keys: keys.length };
  }

  /** `<topic>:<partition>` → next offset to consume, as stored with the last applied batch. */
  async offsets(name: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(new ProjectionKeys(name).offsets())));
  }

  /** The stored offsets of a namespace, parsed (fields that name no partition are left out). */
  async storedOffsets(name: string): Promise<StoredOffset[]> {
    const out: StoredOffset[] = [];
    for (const [field, offset] of await this.offsets(name)) {
      const at = parseOffsetField(field);
      if (at !== null) out.push({ ...at, offset });
    }
    return out;
  }

  /**
   * Overwrites stored offsets (`tally consumers reset` on a stopped projector group): the projector
   * resumes from these, not from Kafka's commits.
   */
  async storeOffsets(name: string, offsets: readonly StoredOffset[]): Promise<void> {
    const fields = offsets.flatMap((o) => [offsetField(o.topic, o.partition), o.offset]);
    if (fields.length > 0) await this.redis.hset(new ProjectionKeys(name).offsets(), ...fields);
  }

  /** Registers a namespace a replay is about to write, marked `running`, with the range it covers. */
  async beginReplay(name: string, start: ReplayStart): Promise<void> {
    await this.redis.sadd(NAMESPACES_KEY, name);
    await this.redis.hset(new ProjectionKeys(name).meta(), {
      created: start.startedMs,
      [META_REPLAY]: 'running',
      [META_COVERED_FROM]: start.coveredFrom,
      [META_COVERED_TO]: start.coveredTo,
    });
  }

  /**
   * Marks a replay `complete`. Partitions with nothing in range still record where the range ends
   * (`ends`, never overwriting what the steps stored), so a projector switched to the namespace
   * resumes there rather than at the start of the topic.
   */
  async completeReplay(name: string, ends: readonly StoredOffset[]): Promise<void> {
    const keys = new ProjectionKeys(name);
    for (const end of ends)
      await this.redis.hsetnx(keys.offsets(), offsetField(end.topic, end.partition), end.offset);
    await this.redis.hset(keys.meta(), META_REPLAY, 'complete');
  }

  /** The range a replayed namespace covers; empty for a projector-made one. */
  async coverage(name: string): Promise<NamespaceCoverage> {
    const [from, to] = await this.redis.hmget(
      new ProjectionKeys(name).meta(),
      META_COVERED_FROM,
      META_COVERED_TO,
    );
    return {
      ...(from === null ? {} : { from: Number(from) }),
      ...(to === null ? {} : { to: Number(to) }),
    };
  }
}
