import { decodeOutboxTime, OutboxEntryError } from './outbox-payload';

/**
 * The override half of the outbox contract. A change of a runtime override (override-write.lua of
 * @tally/engine) appends one entry to the shard's outbox stream in the same step as the change:
 * `o` = this head as JSON (built in TypeScript before the script runs), `b` / `a` = the stored value
 * of the override before / after the change ('' = none), `n` = the change's version, `t` = Redis time
 * of the change (ms). The relay tells it from a decision (`p`) and a release (`l`) by field `o`.
 */
export interface OverrideHead {
  /** Head format version; a relay refuses versions it does not know rather than guess. */
  readonly v: 1;
  /** The change's id (ULID minted by the API): the event id, deduplicated on. */
  readonly id: string;
  readonly action: 'set' | 'remove';
  readonly policy: string;
  /** The policy's key value (dims percent-encoded, `''` for a policy without key dims). */
  readonly key: string;
  /** The tenant whose counters it changes; absent: requests without a tenant. */
  readonly tenant?: string;
  /** The NAME of the token that made the change (never the token). */
  readonly set_by: string;
  /** Why, in the operator's words ('' when none was given). */
  readonly reason: string;
}

/** One override entry of the outbox stream as read with XREADGROUP. */
export interface OverrideEntry {
  readonly o: string;
  readonly b: string;
  readonly a: string;
  readonly n: string;
  readonly t: string;
}

/**
 * A stored override value (engine's override hash): `<version>;<expires ms or empty>;<w>=<l>,…`, a
 * newline, then `{"reason","set_by","updated_at"}`. The script copies it into the entry unchanged,
 * so its format is part of this contract; @tally/engine reads its hash with this same decoder.
 */
export interface StoredOverride {
  readonly version: number;
  readonly expiresAtMs: number | null;
  readonly limits: Readonly<Record<string, number>>;
  readonly reason: string;
  readonly setBy: string;
  readonly updatedAtMs: number;
}

const STORED = /^(\d+);(\d*);([^\n]*)\n(.*)$/s;

/** The stored value decoded; null when it is not in this format. Pure. */
export function decodeStoredOverride(value: string): StoredOverride | null {
  const body = STORED.exec(value);
  if (body === null) return null;
  const limits: Record<string, number> = {};
  for (const pair of body[3] === '' ? [] : body[3].split(',')) {
    const eq = pair.indexOf('=');
    limits[pair.slice(0, eq)] = Number(pair.slice(eq + 1));
  }
  let meta: { reason?: unknown; set_by?: unknown; updated_at?: unknown };
  try {
    meta = JSON.parse(body[4]) as typeof meta;
  } catch {
    return null;
  }
  return {
    version: Number(body[1]),
    expiresAtMs: body[2] === '' ? null : Number(body[2]),
    limits,
    reason: typeof meta.reason === 'string' ? meta.reason : '',
    setBy: typeof meta.set_by === 'string' ? meta.set_by : '',
    updatedAtMs: typeof meta.updated_at === 'number' ? meta.updated_at : 0,
  };
}

export function overrideHeadJson(head: OverrideHead): string {
  return JSON.stringify(head);
}

export interface DecodedOverrideEntry {
  readonly head: OverrideHead;
  readonly before: StoredOverride | null;
  readonly after: StoredOverride | null;
  readonly version: number;
  readonly timeMs: number;
}

/** @throws OutboxEntryError when the entry is not an override entry this version can read. */
export function decodeOverrideEntry(entry: OverrideEntry): DecodedOverrideEntry {
  let head: unknown;
  try {
    head = JSON.parse(entry.o);
  } catch {
    throw new OutboxEntryError('o is not JSON');
  }
  if (typeof head !== 'object' || head === null || Array.isArray(head))
    throw new OutboxEntryError('o is not a JSON object');
  const h = head as Record<string, unknown>;
  if (h.v !== 1) throw new OutboxEntryError(`unknown override head version ${String(h.v)}`);
  if (typeof h.id !== 'string' || h.id === '' || typeof h.policy !== 'string' || typeof h.key !== 'string')
    throw new OutboxEntryError('o needs id, policy and key');
  if (h.action !== 'set' && h.action !== 'remove') throw new OutboxEntryError('o.action is not set|remove');
  if (typeof h.set_by !== 'string' || typeof h.reason !== 'string')
    throw new OutboxEntryError('o needs set_by and reason');
  const stored = (name: 'a' | 'b'): StoredOverride | null => {
    if (entry[name] === '') return null;
    const decoded = decodeStoredOverride(entry[name]);
    if (decoded === null) throw new OutboxEntryError(`${name} is not a stored override`);
    return decoded;
  };
  if (!/^\d{1,16}$/.test(entry.n)) throw new OutboxEntryError(`n is not a version: ${entry.n}`);
  const timeMs = decodeOutboxTime(entry.t);
  return {
    head: head as OverrideHead,
    before: stored('b'),
    after: stored('a'),
    version: Number(entry.n),
    timeMs,
  };
}
