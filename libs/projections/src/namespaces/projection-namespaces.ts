import { scanKeys, type RedisClient } from '@tally/redis';
import {
  ACTIVE_NAMESPACE_KEY,
  MAX_SHARDS,
  NAMESPACES_KEY,
  NamespaceKeys,
  ProjectionKeys,
  isValidNamespace,
  offsetField,
  parseOffsetField,
  shardOfPartition,
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
/** Layout 2: the number of shards the namespace is divided into, fixed when it is created. */
const META_SHARDS = 'shards';
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
   * Registers `name` (divided into `shards` shards unless it already is) and makes it active unless
   * one already is (first start); returns the active one. SET NX: two projectors starting together
   * agree on one.
   */
  async ensureActive(name: string, shards: number): Promise<string> {
    const keys = new NamespaceKeys(name);
    await this.redis.sadd(NAMESPACES_KEY, name);
    const [seconds, micros] = await this.redis.time();
    await this.redis.hsetnx(
      keys.meta(),
      'created',
      Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    );
    await this.ensureShards(name, shards);
    await this.redis.set(ACTIVE_NAMESPACE_KEY, name, 'NX');
    return (await this.active()) ?? name;
  }

  /**
   * The shards `name` is divided into, fixing them at `shards` if not yet fixed (HSETNX: the first
   * writer wins, and every later one reads what it fixed). A namespace's shard count never changes:
   * the shard of an event must not (`shardOfPartition`).
   */
  async ensureShards(name: string, shards: number): Promise<number> {
    if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS)
      throw new RangeError(`invalid shard count: ${shards}`);
    const meta = new NamespaceKeys(name).meta();
    await this.redis.hsetnx(meta, META_SHARDS, shards);
    return this.shards(name);
  }

  /**
   * The shards of `name`; 0 when it has none fixed (never created, or written by layout 1 before
   * shards: `isLegacy`). Queries read every shard of a namespace.
   */
  async shards(name: string): Promise<number> {
    const stored = await this.redis.hget(new NamespaceKeys(name).meta(), META_SHARDS);
    const shards = Number(stored);
    if (stored === null) return 0;
    if (!/^[1-9]\d*$/.test(stored) || shards > MAX_SHARDS)
      throw new Error(`namespace ${name}: meta field shards is not a shard count: ${stored}`);
    return shards;
  }

  /** Written by layout 1 (every key in one slot): rebuilt by a replay, see docs/operations.md. */
  async isLegacy(name: string): Promise<boolean> {
    return (await this.redis.exists(new NamespaceKeys(name).legacyOffsets())) > 0;
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
    const keys = new NamespaceKeys(name);
    if ((await this.redis.exists(keys.meta(), keys.legacyOffsets())) > 0) return true;
    return (await scanKeys(this.redis, keys.allShards())).length > 0;
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
      const meta = await this.redis.hgetall(new NamespaceKeys(name).meta());
      // The steps count events and time their writes per shard: summed, and the latest write.
      let events = 0;
      let updated: number | null = null;
      for (const shard of await this.shardMetas(name)) {
        events += Number(shard.events ?? 0);
        const at = Number(shard.updated);
        if (shard.updated !== undefined && Number.isFinite(at)) updated = Math.max(updated ?? at, at);
      }
      rows.push({
        name,
        active: name === active,
        events,
        updated: updated === null ? null : new Date(updated).toISOString(),
        shards: Number(meta[META_SHARDS] ?? 0),
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
    const replay = await this.redis.hget(new NamespaceKeys(name).meta(), META_REPLAY);
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
    const keys = new NamespaceKeys(name);
    // Every shard (whatever the shard count says: a half-created namespace), the namespace-wide
    // keys last (its meta says how many shards there are), and layout 1's keys with them.
    const shardKeys = await scanKeys(this.redis, keys.allShards());
    const wide = await scanKeys(this.redis, keys.all());
    let unlinked = 0;
    for (const list of [shardKeys, wide]) {
      // One UNLINK per key, not a pipeline: keys of different shards live in different slots, and
      // a Cluster pipeline must stay on one node.
      for (let i = 0; i < list.length; i += UNLINK_CHUNK)
        await Promise.all(list.slice(i, i + UNLINK_CHUNK).map((key) => this.redis.unlink(key)));
      unlinked += list.length;
    }
    return { keys: unlinked };
  }

  /**
   * `<topic>:<partition>` → next offset to consume, as stored with the last applied batch of each
   * partition's shard.
   */
  async offsets(name: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const keys of await this.shardKeys(name)) {
      for (const [field, offset] of Object.entries(await this.redis.hgetall(keys.offsets())))
        out.set(field, offset);
    }
    return out;
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
    const shards = await this.requireShards(name);
    for (const o of offsets) {
      const keys = new ProjectionKeys(name, shardOfPartition(o.partition, shards));
      await this.redis.hset(keys.offsets(), offsetField(o.topic, o.partition), o.offset);
    }
  }

  /**
   * Registers a namespace a replay is about to write, marked `running`, with the range it covers and
   * its shard count (`start.shards`); returns the shard count.
   */
  async beginReplay(name: string, start: ReplayStart): Promise<number> {
    await this.redis.sadd(NAMESPACES_KEY, name);
    await this.redis.hset(new NamespaceKeys(name).meta(), {
      created: start.startedMs,
      [META_REPLAY]: 'running',
      [META_COVERED_FROM]: start.coveredFrom,
      [META_COVERED_TO]: start.coveredTo,
    });
    return this.ensureShards(name, start.shards);
  }

  /**
   * Marks a replay `complete`. Partitions with nothing in range still record where the range ends
   * (`ends`, never overwriting what the steps stored), so a projector switched to the namespace
   * resumes there rather than at the start of the topic.
   */
  async completeReplay(name: string, ends: readonly StoredOffset[]): Promise<void> {
    const shards = await this.requireShards(name);
    for (const end of ends) {
      const keys = new ProjectionKeys(name, shardOfPartition(end.partition, shards));
      await this.redis.hsetnx(keys.offsets(), offsetField(end.topic, end.partition), end.offset);
    }
    await this.redis.hset(new NamespaceKeys(name).meta(), META_REPLAY, 'complete');
  }

  /** The range a replayed namespace covers; empty for a projector-made one. */
  async coverage(name: string): Promise<NamespaceCoverage> {
    const [from, to] = await this.redis.hmget(
      new NamespaceKeys(name).meta(),
      META_COVERED_FROM,
      META_COVERED_TO,
    );
    return {
      ...(from === null ? {} : { from: Number(from) }),
      ...(to === null ? {} : { to: Number(to) }),
    };
  }

  /** The keys of every shard of `name` (none for a namespace without shards). */
  async shardKeys(name: string): Promise<ProjectionKeys[]> {
    const shards = await this.shards(name);
    return Array.from({ length: shards }, (_, shard) => new ProjectionKeys(name, shard));
  }

  private async shardMetas(name: string): Promise<Record<string, string>[]> {
    const out: Record<string, string>[] = [];
    for (const keys of await this.shardKeys(name)) out.push(await this.redis.hgetall(keys.meta()));
    return out;
  }

  private async requireShards(name: string): Promise<number> {
    const shards = await this.shards(name);
    if (shards === 0)
      throw new NamespaceRefusedError(`namespace ${name} has no shards (created before layout 2)`);
    return shards;
  }
}
