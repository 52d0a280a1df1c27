/**
 * Opaque page cursors: base64url of a small JSON object. Opaque to clients (they pass it back
 * verbatim), transparent to us (no server-side cursor state, any projector instance can continue).
 * Not a security boundary: a forged cursor can only ask for data the caller could query anyway.
 */
const MAX_CURSOR_LENGTH = 2048;

export function encodeCursor(state: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

/** The cursor's object, or null for anything that is not a cursor we could have written. */
export function decodeCursor(cursor: string): Record<string, unknown> | null {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor))
    return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
