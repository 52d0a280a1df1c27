/** One outbox stream entry as read from Redis. */
export interface StreamEntry {
  /** The stream key, `tally:v1:{s<N>}:outbox`. */
  readonly stream: string;
  /** Stream id `<ms>-<seq>`; the ms part is the Redis time of the XADD. */
  readonly id: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** What XAUTOCLAIM handed over on one stream. */
export interface ClaimedEntries {
  /** Cursor for the next XAUTOCLAIM call; `0-0` once the whole pending list was scanned. */
  readonly next: string;
  readonly entries: StreamEntry[];
  /** Pending ids whose entry no longer exists (already published and deleted): only to acknowledge. */
  readonly deleted: string[];
}

/** XREADGROUP reply (`null` on timeout, else `[[stream, [[id, [f, v, …]], …]], …]`). */
export function parseReadReply(reply: unknown): StreamEntry[] {
  if (reply === null || reply === undefined) return [];
  const entries: StreamEntry[] = [];
  for (const [stream, items] of reply as [string, [string, string[] | null][]][]) {
    for (const [id, flat] of items) {
      // A null body only occurs when re-reading a history whose entry was deleted; nothing to send.
      if (flat !== null) entries.push({ stream: String(stream), id: String(id), fields: fieldsOf(flat) });
    }
  }
  return entries;
}

/** XAUTOCLAIM reply: `[next, [[id, fields], …], deletedIds?]` (the third part since Redis 7). */
export function parseClaimReply(stream: string, reply: unknown): ClaimedEntries {
  const [next, items, deletedIds] = reply as [string, ([string, string[] | null] | null)[], string[]?];
  const entries: StreamEntry[] = [];
  const deleted = (deletedIds ?? []).map(String);
  for (const item of items) {
    if (item === null) continue;
    const [id, flat] = item;
    if (flat === null) deleted.push(String(id));
    else entries.push({ stream, id: String(id), fields: fieldsOf(flat) });
  }
  return { next: String(next), entries, deleted };
}

/** The epoch milliseconds encoded in a stream id. */
export function streamIdMs(id: string): number {
  const dash = id.indexOf('-');
  return Number(dash < 0 ? id : id.slice(0, dash));
}

function fieldsOf(flat: readonly string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
  return fields;
}
