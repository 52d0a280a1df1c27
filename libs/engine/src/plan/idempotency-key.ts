/**
 * The alphabet and length of an idempotency key: 1..255 printable ASCII characters (0x21–0x7E:
 * letters, digits and punctuation; no space, no control character), as the large payment APIs take
 * them. One character is one byte, so a key has one spelling: no Unicode normalization, no lone
 * surrogate re-encoded as U+FFFD, no two keys that a log, a proxy or Redis could make into one.
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export const IDEMPOTENCY_KEY_RULE = `idempotency_key must be 1..${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (0x21-0x7E: letters, digits, punctuation; no spaces or control characters)`;

export function isIdempotencyKey(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
