import type { Override } from './override.types';

/** A listing query: narrowed by policy and/or tenant, paged by an opaque cursor. */
export interface ListQuery {
  readonly policy?: string;
  readonly tenant?: string;
  readonly cursor?: ListCursor;
  readonly limit: number;
}

export interface OverridePage {
  readonly items: readonly Override[];
  /** Opaque; null when the listing is complete. */
  readonly nextCursor: string | null;
}

/** Where the previous page stopped: the shard and the last index field read there. */
export interface ListCursor {
  readonly shard: number;
  readonly field: string;
}

export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify([cursor.shard, cursor.field])).toString('base64url');
}

/** null when it is not a cursor this API wrote. */
export function decodeCursor(text: string): ListCursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      (value[0] as number) >= 0 &&
      typeof value[1] === 'string'
    )
      return { shard: value[0] as number, field: value[1] };
  } catch {
    // not base64url JSON: not ours
  }
  return null;
}

export type { Override };
