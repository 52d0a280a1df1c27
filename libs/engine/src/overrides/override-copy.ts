/**
 * This process's bounded copy of the runtime overrides, for decisions made while Redis does not
 * answer (`local-fallback.ts`). Pure: `OverridesCache` feeds it from Redis, one shard at a time.
 *
 * - **What it holds.** Per shard, the override hash's version (`#seq`) the copy was read at and, per
 *   field `<policy>:<scope>:<key>`, the override's version, expiry and limits (a block as `null`).
 * - **Bounded.** At most `maxEntries` overrides over all shards. Past it, blocks come first: a block
 *   takes the place of a held raise/lowering (this shard's, else another's); an override that finds
 *   no room is not held and counted as skipped (`skipped`), so the fallback applies the policy's own
 *   limits to it — for a block, it does not hold. Expired overrides are not held.
 * - **Whole shards.** A shard's copy is replaced as one (`begin` … `commit`): a decision sees every
 *   override of the shard as of one read, never half of a refresh.
 */

/** One override as the fallback needs it. */
export interface HeldOverride {
  /** The change that wrote it (the shard's counter). */
  readonly version: number;
  /** Epoch ms (Redis clock) after which it no longer applies; null: until removed. */
  readonly expiresAtMs: number | null;
  /** Window name → limit; null: a block (some window 0, so every window of the policy denies). */
  readonly limits: Readonly<Record<string, number>> | null;
}

export interface SkippedOverrides {
  /** Blocks in Redis that the copy does not hold: they do not hold while Redis is down. */
  readonly blocks: number;
  /** Other overrides in Redis that the copy does not hold: their policy's limits apply instead. */
  readonly limits: number;
}

/** The override cache's settings (TALLY_OVERRIDE_CACHE_*). */
export interface OverrideCacheOptions {
  /** How often the shard versions are polled, ms. */
  readonly refreshMs: number;
  /** Overrides held at most (blocks first; the rest are skipped and counted). */
  readonly maxEntries: number;
}

/** What the metrics show of the copy after each refresh round (failed ones included). */
export interface OverrideCacheStats {
  /** Since the start of the last complete refresh, ms; Infinity until one completed. */
  readonly ageMs: number;
  readonly entries: number;
  readonly skipped: SkippedOverrides;
}

interface ShardCopy {
  readonly version: number;
  readonly entries: Map<string, HeldOverride>;
  /** Fields of held non-block overrides, most recently added last: the ones a block may displace. */
  readonly displaceable: string[];
  skippedBlocks: number;
  skippedLimits: number;
}

/** Builds one shard's new copy from a read of its hash; nothing changes until `commit`. */
export interface ShardCopyBuilder {
  /** One field of the hash and its stored value (the `#seq` counter and unknown formats are ignored). */
  add(field: string, value: string): void;
  /** Puts the new copy in force in place of the shard's old one. */
  commit(): void;
}

export class OverrideCopy {
  private readonly shards = new Map<number, ShardCopy>();
  private held = 0;

  constructor(readonly maxEntries: number) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
      throw new Error('maxEntries must be an integer ≥ 1');
  }

  /** Overrides held now, over all shards (≤ `maxEntries`). */
  get size(): number {
    return this.held;
  }

  get skipped(): SkippedOverrides {
    let blocks = 0;
    let limits = 0;
    for (const s of this.shards.values()) {
      blocks += s.skippedBlocks;
      limits += s.skippedLimits;
    }
    return { blocks, limits };
  }

  /** The shard version the copy was read at; undefined: never read. */
  versionOf(shard: number): number | undefined {
    return this.shards.get(shard)?.version;
  }

  /** The override of `field` in `shard` in force at `nowMs`, if the copy holds one. */
  lookup(shard: number, field: string, nowMs: number): HeldOverride | undefined {
    const held = this.shards.get(shard)?.entries.get(field);
    return held === undefined || !inForceAt(held, nowMs) ? undefined : held;
  }

  /** A new copy of `shard`, read at `version`; `nowMs`: expired overrides are left out. */
  begin(shard: number, version: number, nowMs: number): ShardCopyBuilder {
    const next: ShardCopy = {
      version,
      entries: new Map(),
      displaceable: [],
      skippedBlocks: 0,
      skippedLimits: 0,
    };
    const old = this.shards.get(shard);
    // Room for this shard: the bound less what the other shards hold (evictions there add to it).
    let room = this.maxEntries - (this.held - (old?.entries.size ?? 0));
    const displaceElsewhere = (): boolean => {
      for (const [n, other] of this.shards) {
        if (n === shard) continue;
        const field = popDisplaceable(other);
        if (field === undefined) continue;
        other.entries.delete(field);
        other.skippedLimits++;
        this.held--;
        return true;
      }
      return false;
    };
    return {
      add: (field, value) => {
        const held = decodeHeld(value);
        if (held === null || !inForceAt(held, nowMs)) return;
        // A scan may return a field twice (HSCAN's guarantee), changed in between: the later value wins.
        const seen = next.entries.get(field);
        if (seen === undefined && next.entries.size >= room) {
          if (held.limits !== null) {
            next.skippedLimits++;
            return;
          }
          const own = popDisplaceable(next);
          if (own !== undefined) {
            next.entries.delete(own);
            next.skippedLimits++;
          } else if (displaceElsewhere()) {
            room++;
          } else {
            next.skippedBlocks++;
            return;
          }
        }
        next.entries.set(field, held);
        if (held.limits !== null && (seen === undefined || seen.limits === null))
          next.displaceable.push(field);
      },
      commit: () => {
        const current = this.shards.get(shard);
        this.held += next.entries.size - (current?.entries.size ?? 0);
        this.shards.set(shard, next);
      },
    };
  }
}

/** The most recently added field still held as a non-block, taken off the list; undefined: none. */
function popDisplaceable(copy: ShardCopy): string | undefined {
  for (let field = copy.displaceable.pop(); field !== undefined; field = copy.displaceable.pop()) {
    const held = copy.entries.get(field);
    if (held !== undefined && held.limits !== null) return field;
  }
  return undefined;
}

/** `<version>;<expires ms or empty>;<window>=<limit>,…` then a newline and metadata (override-record.ts). */
const STORED = /^(\d+);(\d*);([^\n]*)/;

/** The part of a stored override the fallback needs; null when the value is not one. */
export function decodeHeld(value: string): HeldOverride | null {
  const match = STORED.exec(value);
  if (match === null) return null;
  const limits: Record<string, number> = {};
  let blocked = false;
  for (const pair of match[3] === '' ? [] : match[3].split(',')) {
    const at = pair.lastIndexOf('=');
    const limit = Number(pair.slice(at + 1));
    if (at <= 0 || !Number.isSafeInteger(limit) || limit < 0) return null;
    limits[pair.slice(0, at)] = limit;
    // As decide.lua: a 0 on any window blocks the key.
    if (limit === 0) blocked = true;
  }
  return {
    version: Number(match[1]),
    expiresAtMs: match[2] === '' ? null : Number(match[2]),
    limits: blocked ? null : limits,
  };
}

function inForceAt(held: HeldOverride, nowMs: number): boolean {
  return held.expiresAtMs === null || held.expiresAtMs > nowMs;
}
