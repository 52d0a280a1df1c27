/**
 * The time part of an event id, epoch ms: the first 10 characters of a ULID (Crockford base32, 48
 * bits). A decision id is minted by the API when it plans the decision, so every copy of one
 * decision — the relay's re-publications, the `allowed` entry of a timed-out step that committed and
 * the `degraded` entry the API appended for it — carries the same id and so the same id time, while
 * their event times may differ (Redis's clock, the API's). A coalesced denial's id time is its second.
 * Undefined for anything that is not ULID-shaped (validated events always are).
 */
export function idTimeMs(id: string): number | undefined {
  if (id.length !== 26) return undefined;
  let ms = 0;
  for (let i = 0; i < 10; i++) {
    const code = id.charCodeAt(i);
    const value = code < 128 ? CROCKFORD[code] : -1;
    if (value < 0) return undefined;
    ms = ms * 32 + value;
  }
  // 10 characters hold 50 bits; a ULID's time is 48 (its first character is 0–7).
  return ms <= MAX_ULID_TIME ? ms : undefined;
}

const MAX_ULID_TIME = 2 ** 48 - 1;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Character code → value, -1 outside the alphabet (upper case only, as ULID_PATTERN requires). */
const CROCKFORD: readonly number[] = Array.from({ length: 128 }, (_, code) =>
  ALPHABET.indexOf(String.fromCharCode(code)),
);
